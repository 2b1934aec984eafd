"""Number (the organization's channel settings, sending.Channel until now) and
MessageTemplate, moved here from sending: their tables are adopted as they are (no
database change here; 0002 renames and reshapes them), and their content types follow
them, so the permissions on them are kept."""

import uuid

import django.db.models.deletion
from django.db import migrations, models

import messaging_project.core.encryption

MOVES = {'channel': 'number', 'messagetemplate': 'messagetemplate'}


def move_content_types(apps, schema_editor, source, target, names):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    records = ContentType.objects.using(schema_editor.connection.alias)
    for old, new in names.items():
        if not records.filter(app_label=target, model=new).exists():
            records.filter(app_label=source, model=old).update(app_label=target, model=new)


def forwards(apps, schema_editor):
    move_content_types(apps, schema_editor, 'sending', 'business_numbers', MOVES)


def backwards(apps, schema_editor):
    reverse = {new: old for old, new in MOVES.items()}
    move_content_types(apps, schema_editor, 'business_numbers', 'sending', reverse)


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        ('sending', '0015_status_callback_data'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Number',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('sandbox', 'Sandbox (messages stay on this server)'), ('cloud_api', 'WhatsApp Cloud API')], default='sandbox', max_length=16, verbose_name='channel')),
                        ('phone_number_id', models.CharField(blank=True, default='', max_length=32, verbose_name='phone number id')),
                        ('business_account_id', models.CharField(blank=True, default='', max_length=32, verbose_name='business account id')),
                        ('access_token', messaging_project.core.encryption.EncryptedTextField(blank=True, default='', verbose_name='access token')),
                        ('app_secret', messaging_project.core.encryption.EncryptedTextField(blank=True, default='', verbose_name='app secret')),
                        ('verify_token', messaging_project.core.encryption.EncryptedTextField(blank=True, default='', verbose_name='verify token')),
                        ('organization', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='channel_settings', to='accounts.organization', verbose_name='organization')),
                        ('account_status', models.CharField(blank=True, default='', max_length=32, verbose_name='account status')),
                        ('display_phone_number', models.CharField(blank=True, default='', max_length=32, verbose_name='display phone number')),
                        ('enforce_service_window', models.BooleanField(default=False, verbose_name='enforce the service window')),
                        ('health_updated_at', models.DateTimeField(blank=True, null=True, verbose_name='health updated at')),
                        ('messaging_limit', models.CharField(blank=True, default='', max_length=32, verbose_name='messaging limit')),
                        ('quality_rating', models.CharField(choices=[('GREEN', 'green'), ('YELLOW', 'yellow'), ('RED', 'red'), ('UNKNOWN', 'unknown')], default='UNKNOWN', max_length=16, verbose_name='quality rating')),
                        ('restrictions', models.JSONField(blank=True, default=list, verbose_name='restrictions')),
                        ('verified_name', models.CharField(blank=True, default='', max_length=255, verbose_name='verified name')),
                        ('alerts', models.JSONField(blank=True, default=list, verbose_name='alerts')),
                    ],
                    options={
                        'default_permissions': (),
                        'indexes': [],
                        'constraints': [],
                        'verbose_name': 'WhatsApp channel',
                        'verbose_name_plural': 'WhatsApp channel',
                        'db_table': 'sending_channel',
                    },
                ),
                migrations.CreateModel(
                    name='MessageTemplate',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid')),
                        ('created_by', models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by')),
                        ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                        ('deleted_at', models.DateTimeField(blank=True, null=True, verbose_name='deleted at')),
                        ('name', models.CharField(max_length=512, verbose_name='name')),
                        ('language', models.CharField(max_length=16, verbose_name='language')),
                        ('category', models.CharField(blank=True, default='', max_length=32, verbose_name='category')),
                        ('status', models.CharField(blank=True, default='', max_length=32, verbose_name='status')),
                        ('components', models.JSONField(blank=True, default=list, verbose_name='components')),
                        ('external_id', models.CharField(blank=True, default='', max_length=64, verbose_name='external id')),
                        ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated at')),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization')),
                        ('quality', models.CharField(blank=True, default='', max_length=32, verbose_name='quality')),
                        ('reason', models.CharField(blank=True, default='', max_length=255, verbose_name='reason')),
                    ],
                    options={
                        'ordering': ['id'],
                        'abstract': False,
                        'constraints': [models.UniqueConstraint(fields=('organization', 'name', 'language'), name='unique_template_language')],
                        'indexes': [],
                        'verbose_name': 'message template',
                        'verbose_name_plural': 'message templates',
                        'db_table': 'sending_messagetemplate',
                    },
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
