"""The logs: one line per request with its id, organization, path, status and duration;
JSON with LOG_FORMAT=json; never a token or a secret; the admin's changes logged with the
client address (behind a trusted proxy, the forwarded one)."""

import io
import json
import logging
import subprocess
import sys

import pytest
from django.test import Client

from accounts.services import create_staff_user
from messaging_project.core.request_log import (
    JsonFormatter,
    PlainFormatter,
    RequestContextFilter,
    redact,
)
from tests.admin.test_contacts_admin import ADD, contact_form
from tests.channel import set_channel
from tests.tasks.processes import ROOT

PROXY = "10.0.0.2"


@pytest.fixture
def json_lines():
    """What the service logs, formatted as LOG_FORMAT=json formats it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    previous = root.level
    root.setLevel(logging.INFO)

    def lines():
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    yield lines
    root.removeHandler(handler)
    root.setLevel(previous)


def request_lines(lines):
    return [line for line in lines() if line["logger"] == "messaging.requests"]


@pytest.mark.django_db
def test_each_request_is_one_json_line_with_its_fields(json_lines, api, org_a):
    response = api.get("/api/contacts?page=1", HTTP_X_REQUEST_ID="client-chosen-id-1")
    assert response["X-Request-ID"] == "client-chosen-id-1"
    [line] = request_lines(json_lines)
    assert line["request_id"] == "client-chosen-id-1"
    assert line["organization_id"] == org_a.pk
    assert (line["method"], line["path"], line["status"]) == ("GET", "/api/contacts", 200)
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["client"] == "127.0.0.1"
    assert line["level"] == "INFO" and "time" in line


@pytest.mark.django_db
def test_a_bad_request_id_is_replaced_and_lines_during_the_request_carry_it(json_lines, org_a):
    set_channel(org_a, app_secret="s3cret-app-secret-value")
    response = Client().post(
        f"/webhooks/whatsapp/{org_a.uuid}",
        b'{"object": "x", "entry": []}',
        content_type="application/json",
        HTTP_X_REQUEST_ID="bad id\nwith newline",
        HTTP_X_HUB_SIGNATURE_256="sha256=00",
    )
    assert response.status_code == 401
    request_id = response["X-Request-ID"]
    assert len(request_id) == 32 and "\n" not in request_id
    [line] = request_lines(json_lines)
    assert line["request_id"] == request_id and line["organization_id"] == org_a.pk


@pytest.mark.django_db
def test_no_token_or_secret_reaches_the_log(json_lines, api, org_a, caplog):
    set_channel(org_a, verify_token="verify-token-secret-value")
    token = api._credentials["HTTP_AUTHORIZATION"].split()[1]
    api.get("/api/contacts")
    Client().get(
        f"/webhooks/whatsapp/{org_a.uuid}",
        {"hub.mode": "subscribe", "hub.verify_token": "verify-token-secret-value"},
    )
    # Whatever some code logs by mistake is masked too.
    logging.getLogger("anything").warning("Authorization: Bearer %s", token)
    logging.getLogger("anything").warning("GET /?hub.verify_token=verify-token-secret-value")
    text = json.dumps(json_lines())
    # The secret part is URL-safe base64 and may itself hold "_".
    secret = token.split("_", 2)[2]
    assert token not in text and secret not in text
    assert "verify-token-secret-value" not in text
    assert "[redacted]" in text


def test_redaction_masks_tokens_and_secrets():
    assert redact("Bearer abc.def") == "Bearer [redacted]"
    assert redact("token wam_0123456789ab_secretpart") == "token wam_0123456789ab_[redacted]"
    assert redact("access_token=EAAG123&x=1") == "access_token=[redacted]&x=1"
    assert redact("nothing to hide") == "nothing to hide"


def test_human_lines_by_default_carry_the_request_id():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("Bearer t0k",), None)
    RequestContextFilter().filter(record)
    line = PlainFormatter().format(record)
    assert line.endswith("INFO x [-] hello Bearer [redacted]")


@pytest.mark.django_db
def test_the_admins_changes_are_logged_with_the_forwarded_client_address(
    json_lines, settings, org_a
):
    settings.TRUSTED_PROXIES = [PROXY]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    staff = create_staff_user(username="alice", organization=org_a, password="pw-12345678")
    browser = Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.23")
    browser.force_login(staff)
    assert browser.post(ADD, contact_form()).status_code == 302
    [entry] = [line for line in json_lines() if line["logger"] == "messaging.admin"]
    assert "from 198.51.100.23" in entry["message"]
    assert entry["client"] == "198.51.100.23"
    assert [line["client"] for line in request_lines(json_lines)] == ["198.51.100.23"]


# gunicorn's logger as the web process configures it (messaging_project/gunicorn_config.py),
# in a process of its own: its logging configuration is not the suite's.
GUNICORN_ACCESS = """
from datetime import timedelta
from gunicorn.config import Config
from messaging_project import gunicorn_config
cfg = Config()
for name in ("accesslog", "logconfig_dict", "logger_class"):
    cfg.set(name, getattr(gunicorn_config, name))
logger = cfg.logger_class(cfg)
def atoms(*args):
    raise SystemExit("the access log's fields were built")
logger.atoms = atoms
logger.access(None, None, {}, timedelta(0))
"""


def test_gunicorn_builds_no_access_log_line():
    # The service logs each request itself (messaging.requests). Given a logging
    # configuration, gunicorn's own logger would build every request's access-log fields
    # for a logger that writes them nowhere.
    done = subprocess.run(
        [sys.executable, "-c", GUNICORN_ACCESS], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
