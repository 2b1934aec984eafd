"""The database going away while WhatsApp has the message.

WhatsApp's answer is recorded once the database is back within the same request;
when it does not come back, the answer says the outcome is unknown and the
Idempotency-Key stays claimed, so no retry sends the message a second time.

The outage is real: while the fake Cloud API holds the send, its request hook
terminates the PostgreSQL backend behind Django's connection (and, for a longer
outage, refuses new connections to the test database until the test restores them).
"""

import json
import logging

import psycopg
import pytest
from django.db import OperationalError, connection

from business_numbers.models import Number
from devtools.cloud_api_server import graph_error
from messaging_project.api.models import IdempotencyKey
from sending.models import Chat
from tests.faults.test_database_outage import postgres_only

PHONE = "+4915123456789"
SEND = {"phone": PHONE, "message": "Your order has shipped"}
ACCEPTED = {
    "messaging_product": "whatsapp",
    "contacts": [{"input": "4915123456789", "wa_id": "4915123456789"}],
    "messages": [{"id": "wamid.DURINGOUTAGE"}],
}
NOT_RECORDED = (
    "The message may have been sent, but the service could not record the outcome because "
    "its database is unavailable. Do not resend it blindly: a resend may reach the "
    "recipient twice."
)


def real_outage(test):
    """A test that terminates PostgreSQL backends, on a database its threads share."""
    return postgres_only(pytest.mark.django_db(transaction=True)(test))


def post(api, key: str | None = None):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return api.post("/api/send", json.dumps(SEND), content_type="application/json", **headers)


def admin_connection(dbname: str = "postgres") -> psycopg.Connection:
    """A connection of our own, by default to the server's maintenance database."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    return psycopg.connect(**{**params, "dbname": dbname}, autocommit=True)


def allow_connections(allowed: bool) -> None:
    name = connection.settings_dict["NAME"]
    with admin_connection() as admin:
        admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {str(allowed).lower()}')


@pytest.fixture
def outage(api, graph, settings):
    """Arm the outage: the next send reaching the fake Cloud API loses Django's backend.

    `outage(lasting=True)` also refuses new connections until the test ends; `answer`
    is what the fake Cloud API says after its delay (WhatsApp accepting the message)."""
    settings.WHATSAPP_TIMEOUT = 3
    assert api.get("/api/me").status_code == 200  # Django's connection is open
    pid = connection.connection.info.backend_pid
    locked_out = []

    def arm(*, lasting: bool = False, answer: dict | None = None) -> None:
        # A slow send: the outage happens while the fake holds it.
        graph.reply(**(answer or {"json": ACCEPTED}), delay=1.0)

        def on_request(request) -> None:
            graph.on_request = None
            if lasting:
                allow_connections(False)
                locked_out.append(True)
            with admin_connection() as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [pid])
                while admin.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]
                ).fetchone():
                    pass  # gone within milliseconds

        graph.on_request = on_request

    yield arm
    if locked_out:
        allow_connections(True)


@real_outage
def test_the_keys_claim_is_committed_before_whatsapp_is_called(api, cloud_org, graph):
    # What makes a retry on another worker see the claim, whatever happens to this one.
    table = IdempotencyKey._meta.db_table
    seen = []

    def on_request(request) -> None:
        with admin_connection(connection.settings_dict["NAME"]) as other:
            query = f"SELECT completed FROM {table} WHERE key = %s"
            seen.append(other.execute(query, ["order-16"]).fetchall())

    graph.on_request = on_request

    assert post(api, key="order-16").status_code == 200
    assert seen == [[(False,)]]


@real_outage
def test_a_send_whose_database_drops_during_the_call_is_recorded_and_its_retry_replays_it(
    api, cloud_org, graph, outage
):
    outage()

    first = post(api, key="order-17")

    assert first.status_code == 200, first.content
    assert first.json()["data"]["data"]["messages"] == [{"id": "wamid.DURINGOUTAGE"}]
    [chat] = Chat.objects.all()
    assert (chat.status, chat.wam_id) == ("accepted", "wamid.DURINGOUTAGE")

    retried = post(api, key="order-17")

    assert retried.status_code == 200
    assert retried["Idempotent-Replayed"] == "true"
    assert retried.json() == first.json()
    assert len(graph.requests) == 1
    assert Chat.objects.count() == 1


@real_outage
def test_a_send_without_a_key_whose_database_drops_during_the_call_is_recorded(
    api, cloud_org, graph, outage
):
    outage()

    response = post(api)

    assert response.status_code == 200, response.content
    assert Chat.objects.get().wam_id == "wamid.DURINGOUTAGE"
    assert len(graph.requests) == 1


@real_outage
def test_a_refused_send_whose_database_drops_during_the_call_is_recorded_as_failed(
    api, cloud_org, graph, outage
):
    outage(answer={"status": 400, "json": graph_error(131047, "Re-engagement message")})

    first = post(api, key="order-18")
    retried = post(api, key="order-18")

    assert first.status_code == retried.status_code == 422
    assert retried["Idempotent-Replayed"] == "true"
    [chat] = Chat.objects.all()
    assert (chat.status, chat.error_code) == ("failed", 131047)
    assert len(graph.requests) == 1


@real_outage
def test_when_the_database_stays_away_the_key_stays_claimed_and_the_retry_sends_nothing(
    api, cloud_org, graph, outage, monkeypatch
):
    monkeypatch.setattr("messaging_project.core.database.RECONNECT_DELAYS", (0.0, 0.1))
    outage(lasting=True)

    first = post(api, key="order-19")

    assert first.status_code == 503
    assert first.json() == {
        "statusCode": 503,
        "message": NOT_RECORDED,
        "wam_id": "wamid.DURINGOUTAGE",
    }
    assert "Retry-After" not in first  # this one is not to be retried blindly
    allow_connections(True)  # the database is back

    retried = post(api, key="order-19")

    assert retried.status_code == 409
    assert len(graph.requests) == 1
    assert Chat.objects.count() == 0
    assert IdempotencyKey.objects.get(key="order-19").completed is False


@real_outage
def test_when_the_database_stays_away_a_send_without_a_key_says_so_and_logs_what_whatsapp_said(
    api, cloud_org, graph, outage, monkeypatch, caplog
):
    monkeypatch.setattr("messaging_project.core.database.RECONNECT_DELAYS", (0.0, 0.1))
    outage(lasting=True)

    with caplog.at_level(logging.ERROR, logger="sending.services.chats"):
        response = post(api)

    assert response.status_code == 503
    assert response.json()["message"] == NOT_RECORDED
    assert response.json()["wam_id"] == "wamid.DURINGOUTAGE"
    [logged] = [r for r in caplog.records if r.name == "sending.services.chats"]
    assert "wamid.DURINGOUTAGE" in logged.getMessage()
    assert f"organization {cloud_org.pk}" in logged.getMessage()
    allow_connections(True)  # the database is back
    assert Chat.objects.count() == 0
    assert len(graph.requests) == 1


# Without a real outage: an error of ours at a chosen point (before or after WhatsApp
# was called), injected as the outage tests in test_database_outage.py do.


def lost_connection(*args, **kwargs):
    raise OperationalError("server closed the connection unexpectedly")


def test_an_error_of_ours_after_whatsapp_was_called_keeps_the_key_claimed(
    api, cloud_org, graph, monkeypatch
):
    monkeypatch.setattr("sending.api.views.send_response", lost_connection)

    first = post(api, key="order-21")

    assert first.status_code == 503
    monkeypatch.undo()
    retried = post(api, key="order-21")
    assert retried.status_code == 409
    assert len(graph.requests) == 1


def test_an_error_of_ours_before_whatsapp_was_called_frees_the_key_for_the_retry(
    api, cloud_org, graph, monkeypatch
):
    monkeypatch.setattr("sending.services.send.contact_for_phone", lost_connection)

    first = post(api, key="order-22")

    assert first.status_code == 503
    assert graph.requests == []
    monkeypatch.undo()
    retried = post(api, key="order-22")
    assert retried.status_code == 200
    assert "Idempotent-Replayed" not in retried
    assert len(graph.requests) == 1


def test_a_chat_inserted_again_after_its_commit_went_unanswered_is_stored_once(cloud_org):
    # A lost connection may have taken the COMMIT's answer with it: the reconnected
    # attempt then finds the chat by its uuid instead of storing a second one.
    from sending.services.chats import record
    from tests.factories import ContactFactory

    contact = ContactFactory(organization=cloud_org)
    number = Number.objects.default_for(cloud_org)
    fields = {"organization": cloud_org, "number": number, "contact": contact, "type": "outbound"}
    first = record(Chat(**fields, wam_id="wamid.ONCE", status="accepted"))

    again = record(Chat(**fields, uuid=first.uuid, wam_id="wamid.ONCE", status="accepted"))

    assert again.pk == first.pk
    assert Chat.objects.count() == 1
