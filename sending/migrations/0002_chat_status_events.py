import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0003_organization_channel'),
        ('sending', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='ChatStatusEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('wam_id', models.CharField(max_length=255)),
                ('status', models.CharField(choices=[('accepted', 'accepted'), ('held_for_quality_assessment', 'held for quality assessment'), ('paused', 'paused'), ('sent', 'sent'), ('delivered', 'delivered'), ('read', 'read'), ('failed', 'failed'), ('received', 'received')], max_length=32)),
                ('timestamp', models.DateTimeField(help_text='When the channel says it happened.')),
                ('error_code', models.IntegerField(blank=True, null=True)),
                ('error_title', models.CharField(blank=True, default='', max_length=255)),
                ('error_details', models.JSONField(blank=True, null=True)),
                ('received_at', models.DateTimeField(auto_now_add=True)),
                ('chat', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='status_events', to='sending.chat')),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
            ],
            options={
                'ordering': ['timestamp', 'id'],
                'indexes': [models.Index(fields=['organization', 'wam_id'], name='status_event_message')],
                'constraints': [models.UniqueConstraint(fields=('organization', 'wam_id', 'status', 'timestamp'), name='unique_status_event')],
            },
        ),
    ]
