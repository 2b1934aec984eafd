import django.db.models.deletion
import events.models
import messaging_project.core.encryption
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
    ]

    operations = [
        migrations.CreateModel(
            name='Endpoint',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('created_by', models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('deleted_at', models.DateTimeField(blank=True, null=True)),
                ('url', models.CharField(max_length=2048)),
                ('events', models.JSONField(blank=True, default=list)),
                ('secret', messaging_project.core.encryption.EncryptedTextField(default=events.models.new_secret)),
                ('previous_secret', messaging_project.core.encryption.EncryptedTextField(blank=True, default='')),
                ('previous_secret_expires_at', models.DateTimeField(blank=True, null=True)),
                ('is_active', models.BooleanField(default=True)),
                ('disabled_reason', models.CharField(blank=True, default='', max_length=255)),
                ('failing_since', models.DateTimeField(blank=True, null=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
            ],
            options={
                'verbose_name': 'event webhook endpoint',
                'ordering': ['id'],
                'abstract': False,
            },
        ),
        migrations.CreateModel(
            name='Delivery',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('msg_id', models.CharField(default=events.models.new_message_id, max_length=64, unique=True)),
                ('event', models.CharField(choices=[('message.received', 'Message Received'), ('message.sent', 'Message Sent'), ('message.status.update', 'Message Status Update'), ('contact.created', 'Contact Created'), ('contact.updated', 'Contact Updated'), ('contact.deleted', 'Contact Deleted'), ('group.created', 'Group Created'), ('group.updated', 'Group Updated'), ('group.deleted', 'Group Deleted'), ('autoreply.created', 'Autoreply Created'), ('autoreply.updated', 'Autoreply Updated'), ('autoreply.deleted', 'Autoreply Deleted')], max_length=32)),
                ('body', models.TextField()),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='pending', max_length=16)),
                ('attempts', models.PositiveSmallIntegerField(default=0)),
                ('claimed_until', models.DateTimeField(blank=True, null=True)),
                ('next_attempt_at', models.DateTimeField(blank=True, null=True)),
                ('response_status', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('last_error', models.TextField(blank=True, default='')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
                ('endpoint', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='events.endpoint')),
            ],
            options={
                'verbose_name_plural': 'deliveries',
                'ordering': ['-id'],
            },
        ),
        migrations.AddIndex(
            model_name='endpoint',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), ('is_active', True)), fields=['organization'], name='active_event_endpoints'),
        ),
        migrations.AddIndex(
            model_name='endpoint',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True)), fields=['organization', 'id'], name='live_event_endpoints'),
        ),
        migrations.AddIndex(
            model_name='delivery',
            index=models.Index(fields=['endpoint', '-id'], name='endpoint_deliveries'),
        ),
    ]
