"""Secrets encrypted at rest: the keys, `EncryptedTextField`, and the raw-column helpers
the data migrations and `rotate_encryption_key` use.

The keys come from FIELD_ENCRYPTION_KEYS (Fernet keys, comma-separated, newest first):
the newest encrypts, every one of them decrypts (cryptography's MultiFernet), so a new
key can be put in front and the old ones kept until `rotate_encryption_key` has
re-encrypted every secret. Without the setting, a development key is derived from
SECRET_KEY, with a warning in the log; `check --deploy` refuses it.

A stored value is `fernet:` followed by the Fernet token. The prefix tells an encrypted
value from a plain one left by an older version (read as it is, encrypted on the next
write or by the migration), so nothing is ever encrypted twice. The empty string is
stored as it is: it says only that no secret is set.
"""

import base64
import contextlib
import hashlib
import logging
from collections.abc import Iterator
from functools import cache, lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db import DatabaseError, migrations, models, transaction
from django.db import connection as default_connection

from messaging_project.core import queries

logger = logging.getLogger(__name__)

PREFIX = "fernet:"


class DecryptionError(ImproperlyConfigured):
    """A stored secret that none of FIELD_ENCRYPTION_KEYS decrypts (a key was dropped)."""


def development_key() -> str:
    """A Fernet key derived from SECRET_KEY, for running without FIELD_ENCRYPTION_KEYS."""
    digest = hashlib.sha256(b"field-encryption:" + settings.SECRET_KEY.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()


def configured_keys() -> list[str]:
    return [key for key in getattr(settings, "FIELD_ENCRYPTION_KEYS", []) if key]


def key_problem(key: str) -> str | None:
    try:
        Fernet(key)
    except (ValueError, TypeError):
        return "is not a Fernet key (32 url-safe base64-encoded bytes)"
    return None


@cache
def fernet() -> MultiFernet:
    keys = configured_keys()
    if not keys:
        logger.warning(
            "FIELD_ENCRYPTION_KEYS is not set: secrets are encrypted with a key derived from "
            "SECRET_KEY. Set it in production (docs/operations.md)."
        )
        keys = [development_key()]
    for position, key in enumerate(keys, 1):
        problem = key_problem(key)
        if problem:
            raise ImproperlyConfigured(f"FIELD_ENCRYPTION_KEYS: key {position} {problem}.")
    return MultiFernet([Fernet(key) for key in keys])


def forget_keys(**kwargs) -> None:
    fernet.cache_clear()
    plaintext.cache_clear()


setting_changed.connect(forget_keys)


def is_encrypted(stored: str | None) -> bool:
    return bool(stored and stored.startswith(PREFIX))


def encrypt(plaintext: str) -> str:
    if not plaintext:
        return plaintext
    return PREFIX + fernet().encrypt(plaintext.encode()).decode("ascii")


def decrypt(stored: str) -> str:
    """The plaintext of a stored value; a plain value (not yet encrypted) as it is."""
    if not is_encrypted(stored):
        return stored
    return plaintext(stored)


# Every webhook loads its channel's secrets: each ciphertext is decrypted once per process
# (a few, small; a new key list, in tests, forgets them with the keys).
@lru_cache(maxsize=512)
def plaintext(stored: str) -> str:
    try:
        return fernet().decrypt(stored.removeprefix(PREFIX).encode("ascii")).decode()
    except (InvalidToken, UnicodeError):
        raise DecryptionError(
            "A stored secret cannot be decrypted with any of FIELD_ENCRYPTION_KEYS: "
            "was a key removed before rotate_encryption_key ran?"
        ) from None


def reencrypted(stored: str) -> str | None:
    """The value under the newest key (plain values encrypted), or None when there is
    nothing to do (empty)."""
    if not stored:
        return None
    if not is_encrypted(stored):
        return encrypt(stored)
    try:
        token = fernet().rotate(stored.removeprefix(PREFIX).encode("ascii"))
    except InvalidToken:
        decrypt(stored)  # raises the explained error
        raise
    return PREFIX + token.decode("ascii")


class EncryptedTextField(models.TextField):
    """A text field whose value (a str in Python) is stored encrypted.

    The ciphertext is random, so the column cannot be searched: only `isnull` lookups
    are offered, and a filter on the value is an error rather than a silent miss. Load
    the row by something else and compare in Python (hmac.compare_digest).
    """

    description = "Text encrypted at rest (Fernet)"

    def from_db_value(self, value, expression, connection):
        return value if value is None else decrypt(value)

    def to_python(self, value):
        return value if value is None or isinstance(value, str) else str(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return value if value is None else encrypt(value)

    def get_lookup(self, lookup_name):
        if lookup_name != "isnull":
            return None
        return super().get_lookup(lookup_name)

    def get_transform(self, lookup_name):
        return None


def encrypted_fields(models_registry=None) -> Iterator[tuple[type[models.Model], str]]:
    """(model, field name) of every EncryptedTextField column of the installed (or the
    given historical) models."""
    registry = models_registry or apps
    for model in registry.get_models():
        options = model._meta
        if options.proxy or not options.managed:
            continue
        for field in options.local_concrete_fields:
            if isinstance(field, EncryptedTextField):
                yield model, field.name


def rewrite_column(model, field_name: str, change, *, connection=None, batch: int = 500) -> int:
    """Apply `change(stored) -> new stored value or None` to every row's raw value.

    Each row is written only if it still holds the value read (a conditional UPDATE), so
    a concurrent save is never overwritten with an older secret. Returns rows changed.
    """
    connection = connection or default_connection
    changed = 0
    for rows in queries.stored_values(connection, model, field_name, batch):
        updates = [
            (new, key, stored)
            for key, stored in rows
            if stored is not None and (new := change(stored)) is not None and new != stored
        ]
        if updates:
            changed += queries.replace_stored_values(connection, model, field_name, updates)
    return changed


def encrypt_plain(stored: str) -> str | None:
    """For the data migrations: encrypt a plain value, leave an encrypted one alone."""
    return None if not stored or is_encrypted(stored) else encrypt(stored)


def decrypt_stored(stored: str) -> str | None:
    """For migrating backwards: the plaintext of an encrypted value."""
    return decrypt(stored) if is_encrypted(stored) else None


def raw_value(model, pk, field_name: str, *, connection=None) -> str | None:
    """The column as the database holds it (for tests and audits)."""
    return queries.stored_value(connection or default_connection, model, pk, field_name)


def encrypt_columns(app_label: str, model_name: str, *field_names: str):
    """A migration operation that encrypts the plain values of existing rows (an encrypted
    value is left alone, so it can run again) and, backwards, decrypts them. Give it a
    migration of its own after the one whose AlterField makes the columns
    EncryptedTextField: PostgreSQL will not ALTER a table its UPDATEs left pending trigger
    events on, in one transaction (sending 0006 and 0007 are the example)."""

    def apply(change):
        def run(apps, schema_editor):
            model = apps.get_model(app_label, model_name)
            for name in field_names:
                rewrite_column(model, name, change, connection=schema_editor.connection)

        return run

    return migrations.RunPython(apply(encrypt_plain), apply(decrypt_stored), elidable=False)


def undecryptable_columns(connection=None) -> list[str]:
    """The encrypted columns (`app.Model.field`) holding a stored value the configured
    keys cannot decrypt. Every stored value is read (a key list may decrypt one
    organization's secrets and not another's), and a column's reading stops at its first
    failure. A table or column not there yet (a database not migrated) has nothing to
    judge."""
    connection = connection or default_connection
    found = []
    for model, field_name in encrypted_fields():
        # In a transaction (tests), a savepoint keeps a failed read from spoiling it.
        guard = (
            transaction.atomic(using=connection.alias)
            if connection.in_atomic_block
            else contextlib.nullcontext()
        )
        try:
            with guard:
                if not all_decrypt(connection, model, field_name):
                    found.append(f"{model._meta.label}.{field_name}")
        except DatabaseError:
            continue
    return found


def all_decrypt(connection, model, field_name: str, batch: int = 1000) -> bool:
    """Whether the configured keys decrypt every encrypted value of the column."""
    for values in queries.encrypted_values(connection, model, field_name, PREFIX, batch):
        for stored in values:
            try:
                plaintext(stored)
            except DecryptionError:
                return False
    return True


def verify_stored_secrets(connection=None) -> None:
    """At a process's start: raise ImproperlyConfigured, saying what to do, when
    FIELD_ENCRYPTION_KEYS cannot decrypt the stored secrets, rather than answering 500
    to every request that needs one later."""
    columns = undecryptable_columns(connection)
    if columns:
        raise ImproperlyConfigured(undecryptable_message(columns))


def undecryptable_message(columns: list[str]) -> str:
    return (
        "FIELD_ENCRYPTION_KEYS cannot decrypt the secrets stored in "
        + ", ".join(columns)
        + ": a key that encrypted them is missing from the list. Put it back (newest "
        'first; docs/operations.md, "Secrets at rest"), then run rotate_encryption_key '
        "before removing it."
    )
