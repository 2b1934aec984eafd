# The channel secrets encrypted at rest (docs/operations.md): the columns become
# EncryptedTextField; 0007 then encrypts the existing values. Two migrations, two
# transactions: PostgreSQL refuses to ALTER a table with pending trigger events, which
# the rows' UPDATEs would leave when migrating backwards.

import messaging_project.core.encryption
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0008_chat_status_played'),
    ]

    operations = [
        migrations.AlterField(
            model_name='channel',
            name='access_token',
            field=messaging_project.core.encryption.EncryptedTextField(blank=True, default=''),
        ),
        migrations.AlterField(
            model_name='channel',
            name='app_secret',
            field=messaging_project.core.encryption.EncryptedTextField(blank=True, default=''),
        ),
        migrations.AlterField(
            model_name='channel',
            name='verify_token',
            field=messaging_project.core.encryption.EncryptedTextField(blank=True, default=''),
        ),
    ]
