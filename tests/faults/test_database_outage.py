"""The database going away for a moment: the request in flight gets a JSON 503 with
`Retry-After`, the broken connection is dropped, and the next request works.

The outage is real on PostgreSQL: another connection terminates the backend that
Django's connection is using (what a restart or a failover does to it). One that died
while idle is replaced when the next request starts, before any of its queries.
"""

import hashlib
import hmac
import json
import select

import pytest
from django.db import OperationalError, ProgrammingError, close_old_connections, connection
from django.test import Client
from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as CountedWrapper

from contacts.models import Contact
from sending.models import Chat, ChatStatusEvent
from tests.background import run_tasks
from tests.channel import set_channel
from tests.factories import CannedReplyFactory
from tests.sending.factories import ChatFactory

UNAVAILABLE = {
    "statusCode": 503,
    "message": "The service is temporarily unavailable. Please retry.",
}
APP_SECRET = "outage-app-secret"

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="terminating a database backend needs PostgreSQL (SQLite has no server to lose)",
)


def terminate_djangos_backend() -> None:
    """Kill the server process behind Django's connection, from a separate connection."""
    import psycopg

    pid = connection.connection.info.backend_pid
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        [[terminated]] = admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchall()
    assert terminated


def deliver(organization, payload: dict):
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    # A real server answers an unhandled error with handler500; so does this client.
    return Client(raise_request_exception=False).post(
        f"/webhooks/whatsapp/{organization.uuid}",
        body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=signature,
    )


def test_a_connectivity_error_is_a_503_with_retry_after(api, monkeypatch):
    def locked(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr("contacts.selectors.contact_page", locked)

    response = api.get("/api/contacts")

    assert response.status_code == 503
    assert response.json() == UNAVAILABLE
    assert response["Retry-After"] == "2"
    assert response["Content-Type"] == "application/json"


def test_other_database_errors_stay_500s(api, monkeypatch):
    def broken(*args, **kwargs):
        raise ProgrammingError("relation does not exist")

    monkeypatch.setattr("contacts.selectors.contact_page", broken)

    response = api.get("/api/contacts")

    assert response.status_code == 500
    assert response.json() == {"statusCode": 500, "message": "Server Error"}


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_request_on_a_dead_connection_is_a_503_and_the_next_one_works(api):
    assert api.get("/api/contacts").status_code == 200  # the connection is open and in use
    terminate_djangos_backend()

    failed = api.get("/api/contacts")

    assert failed.status_code == 503
    assert failed.json() == UNAVAILABLE
    assert int(failed["Retry-After"]) > 0
    assert connection.connection is None  # dropped, not handed to the next request

    created = api.post(
        "/api/contacts", {"first_name": "Ada", "phone": "+4915123456789"}, format="json"
    )
    assert created.status_code == 200, created.content
    listed = api.get("/api/contacts").json()
    assert listed["meta"]["total"] == 1


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_send_on_a_dead_connection_records_nothing_and_the_retry_sends_once(api, org_a):
    from business_numbers.gateway import sandbox

    sandbox.clear_outbox()
    assert api.get("/api/me").status_code == 200
    terminate_djangos_backend()

    failed = api.post("/api/send", {"phone": "+4915123456789", "message": "Hi"}, format="json")

    assert failed.status_code == 503
    assert sandbox.sent_messages() == []  # it failed before reaching the channel
    retried = api.post("/api/send", {"phone": "+4915123456789", "message": "Hi"}, format="json")
    assert retried.status_code == 200
    assert len(sandbox.sent_messages()) == 1
    assert Chat.objects.get().status == "accepted"
    sandbox.clear_outbox()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_webhook_during_an_outage_fails_and_its_retry_records_everything_once(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    CannedReplyFactory(organization=org_a, trigger="hours")
    sent = ChatFactory(organization=org_a, wam_id="wamid.OUT1")
    payload = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "1",
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "statuses": [
                                {
                                    "id": "wamid.OUT1",
                                    "status": "delivered",
                                    "timestamp": "1700000000",
                                }
                            ],
                            "contacts": [{"profile": {"name": "Ada"}, "wa_id": "4915123456789"}],
                            "messages": [
                                {
                                    "from": "4915123456789",
                                    "id": "wamid.IN1",
                                    "timestamp": "1700000001",
                                    "type": "text",
                                    "text": {"body": "Opening hours?"},
                                }
                            ],
                        },
                    }
                ],
            }
        ],
    }
    terminate_djangos_backend()

    failed = deliver(org_a, payload)

    # Any non-200 makes WhatsApp deliver again later; this one says so in JSON.
    assert failed.status_code == 503
    assert failed.json() == UNAVAILABLE
    assert failed["Retry-After"]

    retried = deliver(org_a, payload)
    run_tasks()

    assert retried.status_code == 200, retried.content
    assert retried.json()["processed"]["statuses"] == 1
    assert retried.json()["processed"]["messages"] == 1
    sent.refresh_from_db()
    assert sent.status == "delivered"
    assert ChatStatusEvent.objects.count() == 1
    assert Chat.objects.filter(type="inbound").count() == 1
    assert Chat.objects.filter(type="outbound").exclude(pk=sent.pk).count() == 1  # the reply

    # WhatsApp may deliver it once more anyway: nothing changes.
    again = deliver(org_a, payload)
    run_tasks()
    assert again.status_code == 200
    assert ChatStatusEvent.objects.count() == 1
    assert Chat.objects.count() == 3


def wait_readable(seconds: float = 5) -> None:
    """Until the server's goodbye has reached Django's connection's socket."""
    poll = select.poll()
    poll.register(connection.connection.pgconn.socket, select.POLLIN)
    assert poll.poll(seconds * 1000), "the terminated backend's socket stayed silent"


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_request_checks_its_idle_connection_without_a_round_trip(monkeypatch):
    # Django's check asks the server (SELECT 1); ours does only when the socket has
    # something to read (messaging_project/core/postgresql/base.py).
    real, asked = CountedWrapper.is_usable, []

    def asking(self) -> bool:
        asked.append(self.alias)
        return real(self)

    monkeypatch.setattr(CountedWrapper, "is_usable", asking)
    assert Contact.objects.count() == 0
    well = connection.connection.info.backend_pid
    close_old_connections()  # a request's start, as the server's handler does it
    assert Contact.objects.count() == 0
    assert connection.connection.info.backend_pid == well
    assert asked == []

    terminate_djangos_backend()  # while idle: a restart, a failover
    wait_readable()
    close_old_connections()
    assert Contact.objects.count() == 0  # the next request's queries on a new connection
    assert asked == ["default"]
    assert connection.connection.info.backend_pid != well


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_queued_status_webhooks_outlive_a_dead_connection_with_their_prepared_insert(
    org_a, settings
):
    # Straight to PostgreSQL the queued insert is prepared on its sixth delivery; a lost
    # backend takes the prepared statement with it, and the new connection starts over
    # (no "prepared statement does not exist" for the deliveries after).
    from business_numbers.services import configure_channel
    from inbound.models import QueuedStatuses
    from tests.channel import PHONE_NUMBER_ID
    from tests.inbound.test_status_middleware import one_status

    settings.WHATSAPP_STATUSES_QUEUED = True
    configure_channel(
        organization=org_a,
        phone_number_id=PHONE_NUMBER_ID,
        access_token="token",
        app_secret=APP_SECRET,
    )
    payload = one_status()
    assert [deliver(org_a, payload).status_code for _ in range(7)] == [200] * 7
    terminate_djangos_backend()

    failed = deliver(org_a, payload)

    assert failed.status_code == 503
    assert [deliver(org_a, payload).status_code for _ in range(7)] == [200] * 7
    assert QueuedStatuses.objects.filter(organization=org_a).count() == 14
    if settings.DATABASE_POOLING == "none":
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            prepared = [row[0] for row in cursor.fetchall()]
        assert any("inbound_queuedstatuses" in statement for statement in prepared)
