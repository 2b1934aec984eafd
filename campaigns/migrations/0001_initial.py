import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        ('contacts', '0003_contact_blocks'),
        ('sending', '0005_auto_replies'),
    ]

    operations = [
        migrations.CreateModel(
            name='SendPace',
            fields=[
                ('organization', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='accounts.organization')),
                ('next_at', models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name='Campaign',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('created_by', models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('deleted_at', models.DateTimeField(blank=True, null=True)),
                ('name', models.CharField(max_length=255)),
                ('template', models.JSONField(help_text='As /api/send/template takes it.')),
                ('phones', models.JSONField(blank=True, help_text='The numbers as given.', null=True)),
                ('rate', models.PositiveIntegerField(help_text='Messages per second at most.')),
                ('status', models.CharField(choices=[('scheduled', 'scheduled'), ('running', 'running'), ('completed', 'completed'), ('cancelled', 'cancelled')], default='scheduled', max_length=16)),
                ('scheduled_at', models.DateTimeField(blank=True, null=True)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('contact_group', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='contacts.contactgroup')),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
            ],
            options={
                'ordering': ['id'],
                'abstract': False,
            },
        ),
        migrations.CreateModel(
            name='Recipient',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('phone', models.CharField(help_text='Digits, or the input when not a number.', max_length=64)),
                ('status', models.CharField(choices=[('pending', 'pending'), ('sending', 'sending'), ('sent', 'sent'), ('failed', 'failed'), ('skipped', 'skipped'), ('unknown', 'unknown')], default='pending', max_length=16)),
                ('error', models.TextField(blank=True, default='')),
                ('attempts', models.PositiveSmallIntegerField(default=0)),
                ('claimed_by', models.CharField(blank=True, default='', max_length=255)),
                ('claimed_at', models.DateTimeField(blank=True, null=True)),
                ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='recipients', to='campaigns.campaign')),
                ('chat', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='sending.chat')),
                ('contact', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='contacts.contact')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.AddIndex(
            model_name='campaign',
            index=models.Index(fields=['organization', 'id'], name='campaigns_of_organization'),
        ),
        migrations.AddIndex(
            model_name='recipient',
            index=models.Index(condition=models.Q(('status', 'pending')), fields=['campaign', 'id'], name='pending_recipients'),
        ),
        migrations.AddIndex(
            model_name='recipient',
            index=models.Index(fields=['campaign', 'status'], name='recipients_by_status'),
        ),
    ]
