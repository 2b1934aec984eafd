"""The conversation's fields delivered twice at once (WhatsApp retries a delivery whose
200 it missed while the first is still running): on PostgreSQL, with real concurrent
transactions, each item is still recorded once and each event emitted once."""

import pytest

from contacts.models import Contact
from events.models import Emission
from sending.models import Chat
from tests.contacts.test_contact_counter import on_postgresql, run_concurrently
from tests.factories import ContactFactory
from tests.inbound.conftest import deliver
from tests.inbound.test_conversation import conversation, kinds, receiving

pytestmark = [on_postgresql, pytest.mark.django_db(transaction=True)]


def test_one_history_chunk_delivered_twice_at_once_is_imported_once(org_a):
    webhook = conversation("history:chunk")
    receiving(org_a, webhook)

    answers = run_concurrently([lambda: deliver(org_a, webhook) for _ in range(3)])

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert sorted(answer.json()["processed"].get("imported", 0) for answer in answers) == [0, 0, 2]
    assert Chat.objects.count() == 2 and Contact.objects.count() == 1
    assert kinds().count("history.imported") == 1


def test_one_echo_delivered_twice_at_once_is_one_chat_and_one_event(org_a):
    webhook = conversation("smb_message_echoes:meta_text")
    receiving(org_a, webhook)

    answers = run_concurrently([lambda: deliver(org_a, webhook) for _ in range(3)])

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert Chat.objects.get().source == "business_app"
    assert kinds().count("message.sent") == 1
    assert Emission.objects.filter(event="contact.created").count() == 1


def test_one_preference_delivered_twice_at_once_is_one_contact_updated(org_a):
    webhook = conversation("user_preferences:stop")
    receiving(org_a, webhook)
    ContactFactory(organization=org_a, phone="16505551234", opted_out=False)

    run_concurrently([lambda: deliver(org_a, webhook) for _ in range(3)])

    assert Contact.objects.get().opted_out is True
    assert kinds() == ["contact.updated"]
