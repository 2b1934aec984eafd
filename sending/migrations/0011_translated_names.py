import django.db.models.deletion
import messaging_project.core.encryption
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('canned_replies', '0002_translated_names'),
        ('contacts', '0006_translated_names'),
        ('sending', '0010_encrypt_channel_secrets'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='autoreply',
            options={'ordering': ['id'], 'verbose_name': 'auto-reply', 'verbose_name_plural': 'auto-replies'},
        ),
        migrations.AlterModelOptions(
            name='channel',
            options={'default_permissions': (), 'verbose_name': 'WhatsApp channel', 'verbose_name_plural': 'WhatsApp channel'},
        ),
        migrations.AlterModelOptions(
            name='chat',
            options={'ordering': ['id'], 'verbose_name': 'chat', 'verbose_name_plural': 'chats'},
        ),
        migrations.AlterModelOptions(
            name='messagetemplate',
            options={'ordering': ['id'], 'verbose_name': 'message template', 'verbose_name_plural': 'message templates'},
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='attempts',
            field=models.PositiveSmallIntegerField(default=0, verbose_name='attempts'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='canned_reply',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='canned_replies.cannedreply', verbose_name='canned reply'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='inbound',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='auto_reply', to='sending.chat', verbose_name='inbound'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='last_error',
            field=models.TextField(blank=True, default='', verbose_name='last error'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='media_type',
            field=models.CharField(blank=True, default='', max_length=16, verbose_name='media type'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='message',
            field=models.TextField(help_text="The reply's text, or a media reply's URL, as matched.", verbose_name='message'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='reply',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='sending.chat', verbose_name='reply'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='state',
            field=models.CharField(choices=[('pending', 'pending'), ('sending', 'sending'), ('retrying', 'retrying'), ('sent', 'sent'), ('failed', 'failed'), ('unknown', 'unknown')], default='pending', max_length=16, verbose_name='state'),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='channel',
            name='access_token',
            field=messaging_project.core.encryption.EncryptedTextField(blank=True, default='', verbose_name='access token'),
        ),
        migrations.AlterField(
            model_name='channel',
            name='app_secret',
            field=messaging_project.core.encryption.EncryptedTextField(blank=True, default='', verbose_name='app secret'),
        ),
        migrations.AlterField(
            model_name='channel',
            name='business_account_id',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='business account id'),
        ),
        migrations.AlterField(
            model_name='channel',
            name='organization',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='channel_settings', to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='channel',
            name='phone_number_id',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='phone number id'),
        ),
        migrations.AlterField(
            model_name='channel',
            name='verify_token',
            field=messaging_project.core.encryption.EncryptedTextField(blank=True, default='', verbose_name='verify token'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='contact',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chats', to='contacts.contact', verbose_name='contact'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='deleted_by',
            field=models.PositiveIntegerField(blank=True, null=True, verbose_name='deleted by'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='error_code',
            field=models.IntegerField(blank=True, null=True, verbose_name='error code'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='error_details',
            field=models.JSONField(blank=True, null=True, verbose_name='error details'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='error_title',
            field=models.TextField(blank=True, default='', verbose_name='error title'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='media',
            field=models.ForeignKey(blank=True, db_column='media_id', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='chats', to='sending.chatmedia', verbose_name='media'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='metadata',
            field=models.JSONField(default=dict, verbose_name='metadata'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='status',
            field=models.CharField(choices=[('accepted', 'accepted'), ('held_for_quality_assessment', 'held for quality assessment'), ('paused', 'paused'), ('sent', 'sent'), ('delivered', 'delivered'), ('read', 'read'), ('played', 'played'), ('failed', 'failed'), ('received', 'received')], max_length=32, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='type',
            field=models.CharField(choices=[('outbound', 'outbound'), ('inbound', 'inbound')], default='outbound', max_length=16, verbose_name='type'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='wam_id',
            field=models.CharField(blank=True, max_length=255, null=True, verbose_name='WhatsApp message id'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='category',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='category'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='components',
            field=models.JSONField(blank=True, default=list, verbose_name='components'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='external_id',
            field=models.CharField(blank=True, default='', max_length=64, verbose_name='external id'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='language',
            field=models.CharField(max_length=16, verbose_name='language'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='name',
            field=models.CharField(max_length=512, verbose_name='name'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='status',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
    ]
