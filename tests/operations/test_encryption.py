"""Secrets encrypted at rest: the raw column holds no plain text, values round-trip,
rotation moves every secret to the newest key, and the data migration encrypts the rows
an older version left in plain text (and decrypts them backwards)."""

import hashlib
import hmac

import pytest
from cryptography.fernet import Fernet, MultiFernet
from django.core.checks import run_checks
from django.core.exceptions import FieldError, ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from business_numbers import services as number_services
from business_numbers.models import Number
from messaging_project.core import encryption
from tests.channel import stored_channel
from tests.databases import migrate

SECRETS = {
    "access_token": "EAAG-plain-access-token-1234567890",
    "app_secret": "plain-app-secret-abcdef",
    "verify_token": "plain-verify-token-xyz",
}
KEY_1 = Fernet.generate_key().decode()
KEY_2 = Fernet.generate_key().decode()


def configure(organization, **overrides):
    """The organization's default number on the Cloud API; each organization its own id."""
    return number_services.configure_channel(
        organization=organization,
        phone_number_id=f"1065403522{organization.pk:05d}",
        **{**SECRETS, **overrides},
    )


def raw(channel, field):
    return encryption.raw_value(Number, channel.pk, field)


@pytest.fixture
def keys(settings):
    settings.FIELD_ENCRYPTION_KEYS = [KEY_1]
    return settings


@pytest.mark.django_db
def test_the_raw_columns_hold_no_plain_text(keys, org_a):
    channel = configure(org_a)
    for field, secret in SECRETS.items():
        stored = raw(channel, field)
        assert stored.startswith("fernet:")
        assert secret not in stored
        assert Fernet(KEY_1).decrypt(stored.removeprefix("fernet:").encode()).decode() == secret
    # and no secret appears anywhere in the row
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM business_numbers_number WHERE id = %s", [channel.pk])
        row = " ".join(str(value) for value in cursor.fetchone())
    assert not any(secret in row for secret in SECRETS.values())


@pytest.mark.django_db
def test_event_endpoint_secrets_are_encrypted_too(keys, org_a):
    from events.models import Endpoint
    from events.services import create_endpoint, rotate_secret

    endpoint = create_endpoint(organization=org_a, url="https://93.184.215.14/hook")
    first = endpoint.secret
    rotate_secret(endpoint=endpoint)
    endpoint.refresh_from_db()
    assert endpoint.previous_secret == first and endpoint.secret != first
    for field in ("secret", "previous_secret"):
        stored = encryption.raw_value(Endpoint, endpoint.pk, field)
        assert stored.startswith("fernet:")
        assert "whsec_" not in stored
    assert (
        encryption.decrypt(encryption.raw_value(Endpoint, endpoint.pk, "secret")) == endpoint.secret
    )


@pytest.mark.django_db
def test_secrets_round_trip_as_plain_strings(keys, org_a):
    configure(org_a)
    channel = stored_channel(org_a)
    assert {field: getattr(channel, field) for field in SECRETS} == SECRETS
    assert Number.objects.values_list("app_secret", flat=True).get() == SECRETS["app_secret"]


@pytest.mark.django_db
def test_each_secret_is_decrypted_once_per_process(keys, org_a, monkeypatch):
    # Every webhook loads its channel: its secrets are decrypted the first time only.
    configure(org_a)
    decrypted = []
    real = MultiFernet.decrypt
    monkeypatch.setattr(
        MultiFernet, "decrypt", lambda self, token: decrypted.append(token) or real(self, token)
    )
    for _ in range(3):
        assert stored_channel(org_a).app_secret == SECRETS["app_secret"]
    assert len(decrypted) == len(SECRETS)


@pytest.mark.django_db
def test_a_secret_decrypted_before_its_key_was_dropped_is_not_read_from_memory(keys, org_a):
    configure(org_a)
    assert stored_channel(org_a).access_token == SECRETS["access_token"]
    keys.FIELD_ENCRYPTION_KEYS = [KEY_2]
    with pytest.raises(encryption.DecryptionError):
        stored_channel(org_a)


@pytest.mark.django_db
def test_an_empty_secret_stays_empty(keys, org_a):
    channel = configure(org_a, app_secret=None, verify_token=None)
    assert raw(channel, "app_secret") == ""
    assert stored_channel(org_a).app_secret == ""


@pytest.mark.django_db
def test_the_same_secret_encrypts_differently_each_time(keys, org_a, org_b):
    assert raw(configure(org_a), "access_token") != raw(configure(org_b), "access_token")


@pytest.mark.django_db
def test_filtering_by_a_secret_is_refused_rather_than_silently_missing(keys, org_a):
    configure(org_a)
    with pytest.raises(FieldError):
        list(Number.objects.filter(verify_token=SECRETS["verify_token"]))
    assert Number.objects.filter(verify_token__isnull=False).count() == 1


@pytest.mark.django_db
def test_the_webhook_still_checks_the_encrypted_verify_token_and_app_secret(keys, org_a):
    configure(org_a)
    url = f"/webhooks/whatsapp/{org_a.uuid}"
    client = Client()
    good = client.get(
        url,
        {
            "hub.mode": "subscribe",
            "hub.verify_token": SECRETS["verify_token"],
            "hub.challenge": "42",
        },
    )
    assert (good.status_code, good.content) == (200, b"42")
    bad = client.get(
        url, {"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1"}
    )
    assert bad.status_code == 403
    body = b'{"object": "whatsapp_business_account", "entry": []}'
    signature = hmac.new(SECRETS["app_secret"].encode(), body, hashlib.sha256).hexdigest()
    signed = client.post(
        url, body, content_type="application/json", HTTP_X_HUB_SIGNATURE_256=f"sha256={signature}"
    )
    assert signed.status_code == 200


@pytest.mark.django_db
def test_rotation_re_encrypts_every_secret_under_the_newest_key(keys, org_a, org_b, capsys):
    first, second = configure(org_a), configure(org_b, app_secret=None, verify_token=None)
    keys.FIELD_ENCRYPTION_KEYS = [KEY_2, KEY_1]
    call_command("rotate_encryption_key")
    assert "business_numbers.Number.access_token: 2 re-encrypted" in capsys.readouterr().out

    # Readable with the new key alone: the old one can go.
    keys.FIELD_ENCRYPTION_KEYS = [KEY_2]
    newest = Fernet(KEY_2)
    for channel in (first, second):
        for field in SECRETS:
            stored = raw(channel, field)
            if stored:
                newest.decrypt(stored.removeprefix("fernet:").encode())
    assert stored_channel(org_a).access_token == SECRETS["access_token"]
    assert raw(second, "app_secret") == ""


@pytest.mark.django_db
def test_rotation_without_the_old_key_fails_clearly_and_changes_nothing(keys, org_a):
    channel = configure(org_a)
    before = raw(channel, "access_token")
    keys.FIELD_ENCRYPTION_KEYS = [KEY_2]
    with pytest.raises(CommandError, match="cannot be decrypted"):
        call_command("rotate_encryption_key")
    assert raw(channel, "access_token") == before


def test_rotation_finds_encrypted_fields_by_walking_the_models():
    found = {(model._meta.label, name) for model, name in encryption.encrypted_fields()}
    assert {
        ("business_numbers.Number", "access_token"),
        ("business_numbers.Number", "app_secret"),
        ("business_numbers.Number", "verify_token"),
    } <= found


@pytest.mark.django_db
def test_without_keys_a_key_derived_from_the_secret_key_is_used(settings, org_a, caplog):
    settings.FIELD_ENCRYPTION_KEYS = []
    channel = configure(org_a)
    assert "FIELD_ENCRYPTION_KEYS is not set" in caplog.text
    stored = raw(channel, "access_token").removeprefix("fernet:")
    assert (
        Fernet(encryption.development_key()).decrypt(stored.encode()).decode()
        == (SECRETS["access_token"])
    )


@pytest.mark.django_db  # the deploy checks read the server's connection limits
def test_the_deploy_check_refuses_the_development_key(settings):
    settings.FIELD_ENCRYPTION_KEYS = []
    ids = {message.id for message in run_checks(include_deployment_checks=True)}
    assert "base.E002" in ids
    settings.FIELD_ENCRYPTION_KEYS = [KEY_1]
    ids = {message.id for message in run_checks(include_deployment_checks=True)}
    assert "base.E002" not in ids


def test_a_malformed_key_is_a_check_error(settings):
    settings.FIELD_ENCRYPTION_KEYS = ["not-a-key"]
    assert "base.E001" in {message.id for message in run_checks()}


# The data migration (sending 0010).

BEFORE = [("sending", "0008_chat_status_played")]


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_the_migration_encrypts_plain_rows_once_and_decrypts_them_backwards(keys, org_a, org_b):
    encrypted_before = configure(org_a)
    migrate(BEFORE)
    try:
        # Backwards, the encrypted row went back to plain text.
        old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
        OldChannel = old.get_model("sending", "Channel")
        assert (
            encryption.raw_value(OldChannel, encrypted_before.pk, "access_token")
            == SECRETS["access_token"]
        )
        plain = OldChannel.objects.create(
            organization_id=org_b.pk, kind="cloud_api", phone_number_id="1", **SECRETS
        )
        assert encryption.raw_value(OldChannel, plain.pk, "app_secret") == SECRETS["app_secret"]
    finally:
        migrate(None)

    for pk in (encrypted_before.pk, plain.pk):
        for field, secret in SECRETS.items():
            stored = encryption.raw_value(Number, pk, field)
            assert stored.startswith("fernet:") and secret not in stored
            # encrypted once: one decryption gives the plain text back
            assert encryption.decrypt(stored) == secret
    # Running the forward step again changes nothing: encrypted values are left alone.
    assert encryption.rewrite_column(Number, "access_token", encryption.encrypt_plain) == 0
    assert stored_channel(org_b).verify_token == SECRETS["verify_token"]


# Keys that cannot decrypt the stored secrets stop the processes at start.


@pytest.mark.django_db
def test_keys_that_decrypt_the_stored_secrets_pass_the_start_check(keys, org_a):
    configure(org_a)
    encryption.verify_stored_secrets()
    checked = run_checks(databases=["default"], include_deployment_checks=False)
    assert "base.E003" not in {message.id for message in checked}


@pytest.mark.django_db
def test_an_empty_database_passes_the_start_check(keys):
    assert encryption.undecryptable_columns() == []


@pytest.mark.django_db
def test_keys_that_cannot_decrypt_the_stored_secrets_stop_the_start(keys, org_a):
    configure(org_a)
    keys.FIELD_ENCRYPTION_KEYS = [KEY_2]  # KEY_1, which encrypted them, dropped
    assert encryption.undecryptable_columns() == [
        "business_numbers.Number.access_token",
        "business_numbers.Number.app_secret",
        "business_numbers.Number.verify_token",
    ]
    with pytest.raises(ImproperlyConfigured, match="cannot decrypt the secrets stored in"):
        encryption.verify_stored_secrets()
    checked = run_checks(databases=["default"])
    assert "base.E003" in {message.id for message in checked}
    # Without the database asked for (tests, makemigrations), the check stays quiet.
    assert "base.E003" not in {message.id for message in run_checks()}


@pytest.mark.django_db
def test_the_start_check_reads_every_organizations_secrets(keys, org_a, org_b):
    configure(org_a)  # under KEY_1, the first row of each column
    keys.FIELD_ENCRYPTION_KEYS = [KEY_2]
    number_services.configure_channel(  # under KEY_2
        organization=org_b, phone_number_id="106540352242923", **SECRETS
    )
    keys.FIELD_ENCRYPTION_KEYS = [KEY_1]  # org B's key missing: its secrets are unreadable
    assert encryption.undecryptable_columns() == [
        "business_numbers.Number.access_token",
        "business_numbers.Number.app_secret",
        "business_numbers.Number.verify_token",
    ]
    with pytest.raises(ImproperlyConfigured, match="cannot decrypt the secrets stored in"):
        encryption.verify_stored_secrets()
    keys.FIELD_ENCRYPTION_KEYS = [KEY_2, KEY_1]  # both keys: every secret reads
    assert encryption.undecryptable_columns() == []


@pytest.mark.slow
def test_a_worker_started_with_the_wrong_keys_exits_saying_why(tmp_path, migrated_database_in):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {
        **__import__("os").environ,
        "VAR_DIR": str(tmp_path),
        "DATABASE_URL": "",
        "REDIS_URL": "",
        "SECRET_KEY": "start-check",
        "FIELD_ENCRYPTION_KEYS": KEY_1,
        "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
    }

    def manage(*args, **extra):
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=root,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )

    migrated_database_in(tmp_path)
    created = manage(
        "shell",
        "-c",
        "from accounts.models import Organization; from events import services; "
        "services.create_endpoint(organization=Organization.objects.create(name='A'), "
        "url='https://example.com/hook')",
    )
    assert created.returncode == 0, created.stderr
    worker = manage("db_worker", "--batch", FIELD_ENCRYPTION_KEYS=KEY_2)
    assert worker.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS cannot decrypt the secrets stored in" in worker.stderr
    assert "events.Endpoint.secret" in worker.stderr
    assert manage("db_worker", "--batch").returncode == 0  # the right keys: it runs
