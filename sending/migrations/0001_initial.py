import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0003_organization_channel'),
        ('contacts', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='Chat',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('created_by', models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('deleted_at', models.DateTimeField(blank=True, null=True)),
                ('wam_id', models.CharField(blank=True, max_length=255, null=True)),
                ('type', models.CharField(choices=[('outbound', 'outbound'), ('inbound', 'inbound')], default='outbound', max_length=16)),
                ('metadata', models.JSONField(default=dict)),
                ('media_id', models.PositiveBigIntegerField(blank=True, null=True)),
                ('status', models.CharField(choices=[('accepted', 'accepted'), ('held_for_quality_assessment', 'held for quality assessment'), ('paused', 'paused'), ('sent', 'sent'), ('delivered', 'delivered'), ('read', 'read'), ('failed', 'failed'), ('received', 'received')], max_length=32)),
                ('error_code', models.IntegerField(blank=True, null=True)),
                ('error_title', models.TextField(blank=True, default='')),
                ('error_details', models.JSONField(blank=True, null=True)),
                ('deleted_by', models.PositiveIntegerField(blank=True, null=True)),
                ('contact', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chats', to='contacts.contact')),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
            ],
            options={
                'ordering': ['id'],
                'abstract': False,
                'indexes': [models.Index(condition=models.Q(('deleted_at__isnull', True)), fields=['organization', 'id'], name='live_chats')],
                'constraints': [models.UniqueConstraint(condition=models.Q(('wam_id__isnull', False)), fields=('organization', 'wam_id'), name='unique_chat_wam_id')],
            },
        ),
        migrations.CreateModel(
            name='MessageTemplate',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('created_by', models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('deleted_at', models.DateTimeField(blank=True, null=True)),
                ('name', models.CharField(max_length=512)),
                ('language', models.CharField(max_length=16)),
                ('category', models.CharField(blank=True, default='', max_length=32)),
                ('status', models.CharField(blank=True, default='', max_length=32)),
                ('components', models.JSONField(blank=True, default=list)),
                ('external_id', models.CharField(blank=True, default='', max_length=64)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
            ],
            options={
                'ordering': ['id'],
                'abstract': False,
                'constraints': [models.UniqueConstraint(fields=('organization', 'name', 'language'), name='unique_template_language')],
            },
        ),
    ]
