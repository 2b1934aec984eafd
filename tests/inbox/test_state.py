"""What moves a conversation (docs/inbox.md): an inbound message opens it (a resolved or
pending one reopens) and counts as unread; nothing outbound changes its status or unread
count; imported history does neither. The change is made by the upsert that finds or
makes the conversation, in the chat's transaction, and emits its events."""

import json
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from events.models import Emission
from inbox import services
from sending.models import Chat, Conversation, ConversationStatus
from tests.inbound.conftest import deliver, envelope, text_message
from tests.inbound.test_conversation import conversation, receiving
from tests.inbox.conftest import CUSTOMER, conversation_of, writes

pytestmark = pytest.mark.django_db


def events() -> list[dict]:
    return [json.loads(emission.body) for emission in Emission.objects.order_by("id")]


def kinds() -> list[str]:
    return [event["type"] for event in events()]


def test_the_first_inbound_message_makes_an_open_unread_conversation(inbox_org, listening):
    before = timezone.now().replace(microsecond=0)
    writes(inbox_org)

    found = conversation_of(inbox_org)
    assert found.status == ConversationStatus.OPEN
    assert found.unread == 1
    assert found.assignee is None and found.labels == []
    assert before <= found.last_inbound_at <= timezone.now()
    assert found.last_message_at == found.last_inbound_at
    assert found.window_expires_at == found.last_inbound_at + timedelta(hours=24)
    assert Chat.objects.get().conversation_id == found.pk
    assert kinds() == ["contact.created", "conversation.created", "message.received"]
    created = events()[1]["data"]
    assert created["uuid"] == str(found.uuid)
    assert created["status"] == "open" and created["unread"] == 1
    assert created["contact"]["phone"] == CUSTOMER


def test_each_inbound_message_adds_one_unread(inbox_org):
    writes(inbox_org, "one")
    writes(inbox_org, "two")
    writes(inbox_org, "three")

    assert conversation_of(inbox_org).unread == 3
    assert Conversation.objects.count() == 1


def test_an_inbound_message_reopens_a_resolved_conversation(inbox_org, listening):
    writes(inbox_org)
    found = conversation_of(inbox_org)
    services.mark_read(conversation=found)
    services.update_conversation(conversation=found, status=ConversationStatus.RESOLVED)
    Emission.objects.all().delete()

    writes(inbox_org, "Me again")

    found = conversation_of(inbox_org)
    assert found.status == ConversationStatus.OPEN
    assert found.unread == 1
    assert kinds() == ["conversation.updated", "message.received"]
    assert events()[0]["data"]["status"] == "open"


def test_a_pending_conversation_reopens_too(inbox_org):
    writes(inbox_org)
    services.update_conversation(
        conversation=conversation_of(inbox_org), status=ConversationStatus.PENDING
    )

    writes(inbox_org, "Any news?")

    assert conversation_of(inbox_org).status == ConversationStatus.OPEN


def test_a_message_to_an_open_conversation_emits_no_conversation_event(inbox_org, listening):
    writes(inbox_org)
    Emission.objects.all().delete()

    writes(inbox_org, "again")

    assert kinds() == ["message.received"]


def test_an_outbound_message_changes_neither_status_nor_unread(inbox_org, api, graph):
    writes(inbox_org)
    found = conversation_of(inbox_org)
    services.update_conversation(conversation=found, status=ConversationStatus.RESOLVED)
    first_message_at = conversation_of(inbox_org).last_message_at

    response = api.post("/api/send", {"phone": f"+{CUSTOMER}", "message": "Thanks!"}, format="json")

    assert response.status_code == 200, response.content
    after = conversation_of(inbox_org)
    assert after.status == ConversationStatus.RESOLVED
    assert after.unread == 1
    assert after.last_inbound_at == found.last_inbound_at
    assert after.last_message_at > first_message_at


def test_a_send_to_a_new_number_makes_its_conversation_open_and_read(inbox_org, api, listening):
    response = api.post("/api/send", {"phone": "+4915112345678", "message": "Hi"}, format="json")

    assert response.status_code == 200, response.content
    made = conversation_of(inbox_org, "4915112345678")
    assert made.status == ConversationStatus.OPEN and made.unread == 0
    assert made.last_inbound_at is None and made.window_expires_at is None
    assert made.last_message_at is not None
    assert kinds() == ["contact.created", "conversation.created", "message.sent"]


def test_whatsapps_time_is_the_messages_time_never_later_than_now(inbox_org):
    an_hour_ago = int(time.time()) - 3600
    writes(inbox_org, at=an_hour_ago)
    assert conversation_of(inbox_org).last_inbound_at == datetime.fromtimestamp(an_hour_ago, UTC)

    writes(inbox_org, at=int(time.time()) + 86_400)  # a clock a day ahead
    assert conversation_of(inbox_org).last_inbound_at <= timezone.now()


def test_an_older_message_does_not_move_the_times_back(inbox_org):
    writes(inbox_org)
    latest = conversation_of(inbox_org).last_inbound_at

    writes(inbox_org, "late delivery", at=int(time.time()) - 7200)

    after = conversation_of(inbox_org)
    assert after.last_inbound_at == latest == after.last_message_at
    assert after.unread == 2


def test_imported_history_neither_reopens_nor_counts_as_unread(org_a):
    webhook = conversation("history:chunk")
    receiving(org_a, webhook)

    response = deliver(org_a, webhook)

    assert response.status_code == 200, response.content
    found = Conversation.objects.get()
    assert found.status == ConversationStatus.OPEN
    assert found.unread == 0
    # The customer's message of the history is its time: long past, the window closed.
    assert found.last_inbound_at is not None
    assert found.window_expires_at < timezone.now()


def test_a_business_app_echo_counts_as_outbound(org_a):
    webhook = conversation("smb_message_echoes:meta_text")
    receiving(org_a, webhook)

    assert deliver(org_a, webhook).status_code == 200

    found = Conversation.objects.get()
    assert found.unread == 0 and found.last_inbound_at is None
    assert found.last_message_at is not None


def test_a_known_senders_message_to_a_resolved_conversation_costs_no_query_more(
    inbox_org, django_assert_num_queries
):
    # As tests/tasks/test_hot_path_queries.py pins a known sender's message (13 there with
    # an auto-reply's look-ups and task, 10 here, the day's figures among them; 9 on
    # PostgreSQL, whose organization's query brings the event endpoints): reopening is
    # made by the same upsert. A reopen adds analytics' statement (the first-response
    # clock starts again), not the inbox's; on PostgreSQL it goes in the round trip that
    # ends the event batch with the day's figures (events.services.at_batch_end).
    on_postgresql = connection.vendor == "postgresql"
    writes(inbox_org)
    with django_assert_num_queries(9 if on_postgresql else 10):
        writes(inbox_org, "to an open conversation")
    services.update_conversation(
        conversation=conversation_of(inbox_org), status=ConversationStatus.RESOLVED
    )
    with django_assert_num_queries(9 if on_postgresql else 11):
        writes(inbox_org, "back")
    assert conversation_of(inbox_org).status == ConversationStatus.OPEN


def test_every_recorded_message_counts_once_whichever_way_it_came(inbox_org, api, graph):
    """The messages page's total is kept on the conversation: inbound messages, sends
    (to a new number and a known one), a message delivered twice, history and echoes."""
    writes(inbox_org)
    writes(inbox_org, "second")
    assert conversation_of(inbox_org).messages == 2

    # The same message delivered again is not a message more.
    message = text_message("once", sender=CUSTOMER)
    message["messages"][0]["id"] = "wamid.counted-once"
    assert deliver(inbox_org, envelope(message)).status_code == 200
    assert deliver(inbox_org, envelope(message)).status_code == 200
    assert conversation_of(inbox_org).messages == 3

    for text in ("Thanks!", "On its way"):
        sent = api.post("/api/send", {"phone": f"+{CUSTOMER}", "message": text}, format="json")
        assert sent.status_code == 200, sent.content
    assert conversation_of(inbox_org).messages == 5

    first = api.post("/api/send", {"phone": "+4915112345678", "message": "Hi"}, format="json")
    assert first.status_code == 200, first.content
    assert conversation_of(inbox_org, "4915112345678").messages == 1

    for found in Conversation.objects.filter(organization=inbox_org):
        assert found.messages == Chat.objects.filter(conversation=found).count()


@pytest.mark.parametrize("kind", ["history:chunk", "smb_message_echoes:meta_text"])
def test_history_and_echoes_count_as_messages_too(org_a, kind):
    webhook = conversation(kind)
    receiving(org_a, webhook)

    assert deliver(org_a, webhook).status_code == 200

    found = Conversation.objects.get()
    assert found.messages == Chat.objects.filter(conversation=found).count() > 0


def test_a_campaigns_batch_counts_each_message_of_each_conversation(inbox_org):
    from business_numbers.models import Number
    from contacts.models import Contact
    from sending.services.chats import accepted_chat, record_accepted

    writes(inbox_org)
    known = conversation_of(inbox_org).contact
    new = Contact.objects.create(organization=inbox_org, phone="4915112345678")
    number = Number.objects.default_for(inbox_org)
    chats = [
        accepted_chat(
            organization=inbox_org,
            number=number,
            contact=contact,
            metadata={"type": "text", "text": "Sale"},
            message={"id": f"wamid.batch-{n}"},
        )
        for n, contact in enumerate([known, new, known])
    ]

    record_accepted(chats)

    assert conversation_of(inbox_org).messages == 3
    assert conversation_of(inbox_org, "4915112345678").messages == 1
