"""Sends and their conversation on PostgreSQL, with real concurrent transactions
(docs/inbox.md, "Conversations"): a send reads its conversation without locking it and
moves its time as its transaction ends, so a send to a contact does not wait for
another send's whole recording; first sends to a new phone number at once share one
conversation; the conversation's time is the latest send's."""

import threading
from datetime import timedelta

import pytest
from django.db import connections, transaction

from business_numbers.models import Number
from contacts.models import Contact
from events.services import event_batch
from sending.models import Chat, ChatStatus, ChatType, Conversation
from sending.services.conversations import with_sent_conversations
from tests.conftest import client_for
from tests.databases import on_postgresql

pytestmark = [on_postgresql, pytest.mark.django_db(transaction=True)]

PHONE = "+14155552671"


def send(organization, text: str = "Your order has shipped") -> int:
    try:
        return (
            client_for(organization)
            .post("/api/send", {"phone": PHONE, "message": text})
            .status_code
        )
    finally:
        connections.close_all()


def test_first_sends_to_a_new_number_at_once_share_one_conversation(racing_org):
    start = threading.Barrier(6)
    answers: list[int] = []

    def sends():
        start.wait(5)
        answers.append(send(racing_org))

    threads = [threading.Thread(target=sends) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert answers == [200] * 6
    conversation = Conversation.objects.get(organization=racing_org)
    chats = Chat.objects.filter(organization=racing_org)
    assert {chat.conversation_id for chat in chats} == {conversation.pk}
    assert chats.count() == 6 == conversation.messages
    # Each send's time is taken as its conversation is found, a moment before its insert.
    latest = max(chat.created_at for chat in chats)
    assert latest - timedelta(seconds=1) < conversation.last_message_at <= latest
    assert conversation.unread == 0 and conversation.status == "open"


def test_a_send_does_not_wait_for_another_sends_recording(racing_org):
    assert send(racing_org, "first") == 200  # the contact and the conversation exist
    number, contact = Number.objects.get(), Contact.objects.get()
    recording, other_sent, failures = threading.Event(), threading.Event(), []

    def slow_recording():
        """A send's recording that stays open, as a slow transaction would."""
        try:
            with transaction.atomic(), event_batch():
                chat = Chat(
                    organization=racing_org,
                    number=number,
                    contact=contact,
                    type=ChatType.OUTBOUND,
                    status=ChatStatus.ACCEPTED,
                    wam_id="wamid.slow-recording",
                )
                with_sent_conversations([chat])
                chat.save(force_insert=True)
                recording.set()
                if not other_sent.wait(10):
                    failures.append("the other send waited for this recording")
        except Exception as error:  # reported below, not lost in the thread
            failures.append(repr(error))
        finally:
            connections.close_all()

    slow = threading.Thread(target=slow_recording)
    slow.start()
    assert recording.wait(10)
    assert send(racing_org, "second") == 200  # while the first is still open
    other_sent.set()
    slow.join(30)

    assert failures == []
    conversation = Conversation.objects.get(organization=racing_org)
    chats = Chat.objects.filter(organization=racing_org)
    assert chats.count() == 3 == conversation.messages
    assert {chat.conversation_id for chat in chats} == {conversation.pk}
    # The slow recording ended last, but its message is not the latest: the time stays
    # the second send's.
    slow_chat = Chat.objects.get(wam_id="wamid.slow-recording")
    assert conversation.last_message_at > slow_chat.created_at


def test_staff_changes_and_sends_at_once_neither_waits_forever_nor_undoes_the_other(
    racing_org,
):
    """Staff change a conversation (its row locked, then the organization's list total)
    while sends move its time at their transactions' end: no deadlock, and neither
    write undoes the other."""
    from inbox.services import update_conversation

    assert send(racing_org, "first") == 200
    start, failures = threading.Barrier(4), []
    answers: list[int] = []
    written: list[list[str]] = []

    def sends():
        try:
            start.wait(5)
            answers.extend(send(racing_org, f"update {n}") for n in range(5))
        except Exception as error:  # reported below, not lost in the thread
            failures.append(repr(error))

    def staff(name: str):
        try:
            start.wait(5)
            for n in range(5):
                labels = [f"{name}-{n}"]
                conversation = Conversation.objects.get(organization=racing_org)
                status = "resolved" if n % 2 else "pending"
                update_conversation(conversation=conversation, status=status, labels=labels)
                written.append(labels)
        except Exception as error:
            failures.append(repr(error))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=sends) for _ in range(2)] + [
        threading.Thread(target=staff, args=(name,)) for name in ("mia", "ari")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert failures == []
    assert answers == [200] * 10
    conversation = Conversation.objects.get(organization=racing_org)
    assert conversation.labels in written  # a staff write, whole
    # Every send's time counted: the latest is the conversation's.
    latest = max(chat.created_at for chat in Chat.objects.filter(organization=racing_org))
    assert latest - timedelta(seconds=1) < conversation.last_message_at <= latest
    assert conversation.unread == 0
    assert conversation.messages == 11


def test_inbound_messages_and_sends_at_once_each_count_once(racing_org):
    """The count of messages moves in the inbound upsert and in a send's batch-end
    update: customers writing while the business sends, none lost, none twice."""
    from tests.channel import set_channel
    from tests.inbound.conftest import APP_SECRET, deliver, envelope, text_message

    set_channel(racing_org, app_secret=APP_SECRET)
    assert send(racing_org, "first") == 200
    start, failures, answers = threading.Barrier(4), [], []

    def writes(name: str):
        try:
            start.wait(5)
            for n in range(5):
                message = text_message(f"{name} {n}", sender=PHONE.lstrip("+"))
                answers.append(deliver(racing_org, envelope(message)).status_code)
        except Exception as error:  # reported below, not lost in the thread
            failures.append(repr(error))
        finally:
            connections.close_all()

    def sends():
        try:
            start.wait(5)
            answers.extend(send(racing_org, f"reply {n}") for n in range(5))
        except Exception as error:
            failures.append(repr(error))

    threads = [threading.Thread(target=writes, args=(name,)) for name in ("a", "b")] + [
        threading.Thread(target=sends) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert failures == []
    assert answers == [200] * 20
    conversation = Conversation.objects.get(organization=racing_org)
    chats = Chat.objects.filter(organization=racing_org)
    assert chats.count() == 21 == conversation.messages
    assert conversation.unread == chats.filter(type=ChatType.INBOUND).count() == 10
