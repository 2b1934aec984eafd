import django.db.models.deletion
import events.models
import messaging_project.core.encryption
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('events', '0004_emission_outbox'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='delivery',
            options={'ordering': ['-id'], 'verbose_name': 'delivery', 'verbose_name_plural': 'deliveries'},
        ),
        migrations.AlterModelOptions(
            name='endpoint',
            options={'ordering': ['id'], 'verbose_name': 'event webhook endpoint', 'verbose_name_plural': 'event webhook endpoints'},
        ),
        migrations.AlterField(
            model_name='delivery',
            name='attempts',
            field=models.PositiveSmallIntegerField(default=0, verbose_name='attempts'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='body',
            field=models.TextField(verbose_name='body'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='claimed_until',
            field=models.DateTimeField(blank=True, null=True, verbose_name='claimed until'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='endpoint',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='events.endpoint', verbose_name='endpoint'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='event',
            field=models.CharField(choices=[('message.received', 'Message received'), ('message.sent', 'Message sent'), ('message.status.update', 'Message status update'), ('contact.created', 'Contact created'), ('contact.updated', 'Contact updated'), ('contact.deleted', 'Contact deleted'), ('group.created', 'Group created'), ('group.updated', 'Group updated'), ('group.deleted', 'Group deleted'), ('autoreply.created', 'Canned reply created'), ('autoreply.updated', 'Canned reply updated'), ('autoreply.deleted', 'Canned reply deleted')], max_length=32, verbose_name='event'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='last_error',
            field=models.TextField(blank=True, default='', verbose_name='last error'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='msg_id',
            field=models.CharField(default=events.models.new_message_id, max_length=64, verbose_name='webhook-id'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='next_attempt_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='next attempt at'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='response_status',
            field=models.PositiveSmallIntegerField(blank=True, null=True, verbose_name='response status'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='status',
            field=models.CharField(choices=[('pending', 'pending'), ('succeeded', 'succeeded'), ('failed', 'failed')], default='pending', max_length=16, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='emission',
            name='event',
            field=models.CharField(choices=[('message.received', 'Message received'), ('message.sent', 'Message sent'), ('message.status.update', 'Message status update'), ('contact.created', 'Contact created'), ('contact.updated', 'Contact updated'), ('contact.deleted', 'Contact deleted'), ('group.created', 'Group created'), ('group.updated', 'Group updated'), ('group.deleted', 'Group deleted'), ('autoreply.created', 'Canned reply created'), ('autoreply.updated', 'Canned reply updated'), ('autoreply.deleted', 'Canned reply deleted')], max_length=32),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='disabled_reason',
            field=models.CharField(blank=True, default='', max_length=255, verbose_name='disabled reason'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='events',
            field=models.JSONField(blank=True, default=list, verbose_name='events'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='failing_since',
            field=models.DateTimeField(blank=True, null=True, verbose_name='failing since'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='is_active',
            field=models.BooleanField(default=True, verbose_name='is active'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='previous_secret',
            field=messaging_project.core.encryption.EncryptedTextField(blank=True, default='', verbose_name='previous secret'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='previous_secret_expires_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='previous secret expires at'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='secret',
            field=messaging_project.core.encryption.EncryptedTextField(default=events.models.new_secret, verbose_name='secret'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='url',
            field=models.CharField(max_length=2048, verbose_name='URL'),
        ),
        migrations.AlterField(
            model_name='endpoint',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
    ]
