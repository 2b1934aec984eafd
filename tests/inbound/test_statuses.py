"""Status updates: stored once each, and a chat's status only moves forward."""

import json
from itertools import permutations

import pytest
from django.db import connection

from events.models import Emission
from events.services import create_endpoint
from sending.models import Chat, ChatStatusEvent
from tests.inbound.conftest import deliver, envelope, status, statuses
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(webhook_org):
    return ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")


@pytest.mark.parametrize("order", list(permutations(["sent", "delivered", "read"])))
def test_any_arrival_order_ends_read_with_full_history(webhook_org, chat, order):
    times = {"sent": 100, "delivered": 200, "read": 300}
    for name in order:  # one delivery each, in this order
        deliver(webhook_org, envelope(statuses(status("wamid.OUT1", name, times[name]))))
    chat.refresh_from_db()
    assert chat.status == "read"
    assert list(chat.status_events.values_list("status", flat=True)) == [
        "sent",
        "delivered",
        "read",
    ]


@pytest.mark.parametrize("order", list(permutations(["sent", "delivered"])))
def test_status_never_moves_back(webhook_org, chat, order):
    for name in order:
        deliver(webhook_org, envelope(statuses(status("wamid.OUT1", name, 100))))
    chat.refresh_from_db()
    assert chat.status == "delivered"


def test_duplicates_are_stored_once(webhook_org, chat):
    payload = envelope(statuses(status("wamid.OUT1", "delivered", 100)))
    first = deliver(webhook_org, payload).json()["processed"]
    second = deliver(webhook_org, payload).json()["processed"]
    assert first["statuses"] == 1 and second == {
        "statuses": 0,
        "messages": 0,
        "duplicates": 1,
        "skipped": 0,
    }
    assert ChatStatusEvent.objects.count() == 1


def test_failed_is_recorded_with_its_error_whenever_it_comes(webhook_org, chat):
    error = {
        "code": 131047,
        "title": "Re-engagement message",
        "message": "Re-engagement message",
        "error_data": {"details": "Message failed to send because more than 24 hours have passed."},
    }
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "sent", 100))))
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "failed", 200, errors=[error]))))
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 300))))  # late
    chat.refresh_from_db()
    assert chat.status == "failed"
    assert chat.error_code == 131047 and chat.error_title == "Re-engagement message"
    event = chat.status_events.get(status="failed")
    assert event.error_code == 131047 and event.error_details["error_data"]["details"].startswith(
        "Message"
    )


def test_several_entries_and_changes_in_one_delivery(webhook_org):
    first = ChatFactory(organization=webhook_org, wam_id="wamid.A")
    second = ChatFactory(organization=webhook_org, wam_id="wamid.B")
    payload = envelope(
        statuses(status("wamid.A", "sent", 100)), statuses(status("wamid.A", "read", 300))
    )
    payload["entry"].append(envelope(statuses(status("wamid.B", "delivered", 200)))["entry"][0])
    assert deliver(webhook_org, payload).json()["processed"]["statuses"] == 3
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == ("read", "delivered")


def test_unknown_message_id_is_kept_aside(webhook_org):
    response = deliver(webhook_org, envelope(statuses(status("wamid.UNKNOWN", "delivered", 100))))
    assert response.status_code == 200
    event = ChatStatusEvent.objects.get()
    assert event.chat is None and event.wam_id == "wamid.UNKNOWN"


def test_another_organizations_chat_is_never_touched(webhook_org, org_b):
    theirs = ChatFactory(organization=org_b, wam_id="wamid.THEIRS")
    deliver(webhook_org, envelope(statuses(status("wamid.THEIRS", "read", 100))))
    theirs.refresh_from_db()
    assert theirs.status == "accepted"
    assert ChatStatusEvent.objects.get().chat is None


def test_chat_detail_shows_the_status_history(webhook_org, chat, api):
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "sent", 1700000000))))
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 1700000060))))
    data = api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert data["status"] == "delivered"
    assert data["statuses"] == [
        {
            "status": "sent",
            "timestamp": "2023-11-14 22:13:20",
            "error_code": None,
            "error_title": None,
            "pricing": None,
            "conversation": None,
        },
        {
            "status": "delivered",
            "timestamp": "2023-11-14 22:14:20",
            "error_code": None,
            "error_title": None,
            "pricing": None,
            "conversation": None,
        },
    ]


@pytest.mark.parametrize("count", [1, 80])
def test_a_delivery_costs_the_same_queries_for_1_or_80_statuses(
    webhook_org, count, django_assert_num_queries
):
    chats = ChatFactory.create_batch(count, organization=webhook_org)
    payload = envelope(statuses(*(status(chat.wam_id, "delivered", 100) for chat in chats)))
    # organization and its endpoints (none); the delivery's savepoint; one round trip for
    # the message ids' locks, their chats and the statuses stored before; one for the
    # insert and the chats' updates (which keep what the figures counted: nothing more is
    # written for them); the release. (SQLite, no round trips to save: the statements go
    # one by one, no lock.)
    with django_assert_num_queries(5 if connection.vendor == "postgresql" else 8):
        assert deliver(webhook_org, payload).json()["processed"]["statuses"] == count
    assert all(chat.status == "delivered" for chat in Chat.objects.filter(type="outbound"))


def test_a_delivery_again_costs_only_the_look_for_its_known_events(
    webhook_org, chat, django_assert_num_queries
):
    # WhatsApp delivers again what did not get our 200: nothing in it is new, so nothing
    # is written after the first round trip (the locks, the chats, the stored statuses).
    payload = envelope(
        statuses(status(chat.wam_id, "delivered", 100), status("wamid.X", "sent", 1))
    )
    assert deliver(webhook_org, payload).json()["processed"]["statuses"] == 2
    # organization and endpoints; the delivery's savepoint; the first round trip; the release
    with django_assert_num_queries(4 if connection.vendor == "postgresql" else 6):
        assert deliver(webhook_org, payload).json()["processed"]["duplicates"] == 2
    chat.refresh_from_db()
    assert chat.status == "delivered"


def test_a_status_update_event_shows_the_chat_as_the_api_does(webhook_org, chat, api, settings):
    # The event is built from the rows the webhook read, not read again: it must still be
    # the chat as GET /api/chats/{uuid} shows it, its whole history in order.
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    create_endpoint(organization=webhook_org, url="http://127.0.0.1:9/hook")
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 200))))
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "sent", 100))))  # late
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "read", 200))))
    updates = [
        json.loads(emission.body)["data"]
        for emission in Emission.objects.filter(event="message.status.update").order_by("id")
    ]
    assert [update["status"] for update in updates] == ["delivered", "read"]
    assert updates[-1] == api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert [s["status"] for s in updates[-1]["statuses"]] == ["sent", "delivered", "read"]


def test_a_status_without_an_error_stores_none(webhook_org, chat):
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "sent", 100))))
    assert (
        ChatStatusEvent.objects.filter(error_details__isnull=True, pricing__isnull=True).count()
        == 1
    )
