"""`manage.py rotate_encryption_key`: re-encrypt every secret under the newest key.

Every EncryptedTextField of every installed model is found by walking the models, so a
new app's secrets are rotated without naming them here. Run it after putting the new
key first in FIELD_ENCRYPTION_KEYS (on every process), then drop the old keys.
"""

from django.core.management.base import BaseCommand, CommandError

from messaging_project.core.encryption import (
    DecryptionError,
    encrypted_fields,
    reencrypted,
    rewrite_column,
)


class Command(BaseCommand):
    help = "Re-encrypt every encrypted secret under the first key of FIELD_ENCRYPTION_KEYS."

    def handle(self, *args, **options):
        total = 0
        for model, field_name in encrypted_fields():
            try:
                changed = rewrite_column(model, field_name, reencrypted)
            except DecryptionError as error:
                raise CommandError(f"{model._meta.label}.{field_name}: {error}") from None
            total += changed
            self.stdout.write(f"{model._meta.label}.{field_name}: {changed} re-encrypted")
        self.stdout.write(f"Done: {total} secrets now under the newest key.")
