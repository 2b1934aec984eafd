"""System checks for the field-encryption keys: `check --deploy` refuses the development
key derived from SECRET_KEY, and `check --database default` (and `migrate`) refuse keys
that cannot decrypt the stored secrets (the web and the worker refuse to start then:
messaging_project/wsgi.py, db_worker)."""

from django.core import checks

from messaging_project.core.encryption import (
    configured_keys,
    key_problem,
    undecryptable_columns,
    undecryptable_message,
)


@checks.register(checks.Tags.security)
def encryption_keys_are_valid(app_configs, **kwargs):
    return [
        checks.Error(
            f"FIELD_ENCRYPTION_KEYS: key {position} {problem}.",
            hint='Make one with: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())"',
            id="base.E001",
        )
        for position, key in enumerate(configured_keys(), 1)
        if (problem := key_problem(key))
    ]


@checks.register(checks.Tags.security, deploy=True)
def encryption_keys_are_set(app_configs, **kwargs):
    if configured_keys():
        return []
    return [
        checks.Error(
            "FIELD_ENCRYPTION_KEYS is not set: secrets at rest are encrypted with a key "
            "derived from SECRET_KEY.",
            hint="Set FIELD_ENCRYPTION_KEYS to a Fernet key of its own (docs/operations.md).",
            id="base.E002",
        )
    ]


@checks.register(checks.Tags.database)
def encryption_keys_decrypt_the_stored_secrets(app_configs, databases=None, **kwargs):
    if not databases or "default" not in databases:
        return []
    columns = undecryptable_columns()
    if not columns:
        return []
    return [checks.Error(undecryptable_message(columns), id="base.E003")]
