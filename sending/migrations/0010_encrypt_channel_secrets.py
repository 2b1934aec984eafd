# Every existing plain channel secret encrypted (backwards: decrypted), once: a value
# already encrypted is left alone (docs/operations.md).

import messaging_project.core.encryption
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0009_channel_secrets_encrypted_fields'),
    ]

    operations = [
        messaging_project.core.encryption.encrypt_columns(
            'sending', 'channel', 'access_token', 'app_secret', 'verify_token'
        ),
    ]
