# The channel secrets encrypted at rest (docs/operations.md): the columns become
# EncryptedTextField, then every existing plain value is encrypted (backwards: decrypted).

import messaging_project.api.encryption
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0005_auto_replies'),
    ]

    operations = [
        migrations.AlterField(
            model_name='channel',
            name='access_token',
            field=messaging_project.api.encryption.EncryptedTextField(blank=True, default=''),
        ),
        migrations.AlterField(
            model_name='channel',
            name='app_secret',
            field=messaging_project.api.encryption.EncryptedTextField(blank=True, default=''),
        ),
        migrations.AlterField(
            model_name='channel',
            name='verify_token',
            field=messaging_project.api.encryption.EncryptedTextField(blank=True, default=''),
        ),
        messaging_project.api.encryption.encrypt_columns(
            'sending', 'channel', 'access_token', 'app_secret', 'verify_token'
        ),
    ]
