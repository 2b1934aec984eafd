"""Races on PostgreSQL, with real concurrent transactions (docs/inbox.md): two staff
members assigning at once (one wins, both see the same result), and a customer's message
racing a resolve (the conversation ends open, whichever takes the row first)."""

import threading
import time

import pytest
from django.db import connections, transaction

from inbox import services
from sending.models import Chat, ChatStatus, ChatType, Conversation, ConversationStatus
from sending.services.conversations import with_conversations
from tests.databases import on_postgresql
from tests.inbox.conftest import conversation_of, writes

pytestmark = [on_postgresql, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def inbox_org(racing_org, graph):
    from business_numbers import services as number_services
    from tests.channel import ACCESS_TOKEN, BUSINESS_ACCOUNT_ID, PHONE_NUMBER_ID, set_channel
    from tests.inbound.conftest import APP_SECRET

    number_services.configure_channel(
        organization=racing_org,
        phone_number_id=PHONE_NUMBER_ID,
        access_token=ACCESS_TOKEN,
        business_account_id=BUSINESS_ACCOUNT_ID,
    )
    set_channel(racing_org, app_secret=APP_SECRET)
    return racing_org


def test_two_assigns_at_once_one_wins_and_both_see_it(inbox_org, agent, other_agent):
    from tests.conftest import client_for

    writes(inbox_org)
    conversation = conversation_of(inbox_org)
    assigned, answers = threading.Event(), []

    def first_assigns():
        try:
            with transaction.atomic():
                answers.append(
                    services.update_conversation(conversation=conversation, assignee=agent)
                )
                assigned.set()
                time.sleep(0.3)  # the second request reads meanwhile, then waits
        finally:
            connections.close_all()

    first = threading.Thread(target=first_assigns)
    first.start()
    assert assigned.wait(5)
    second = client_for(inbox_org).patch(
        f"/api/conversations/{conversation.uuid}", {"assignee": "ari"}, format="json"
    )
    first.join()

    assert second.status_code == 200
    assert second.json()["data"]["assignee"] == "ada" == answers[0].assignee.username
    assert conversation_of(inbox_org).assignee == agent


def inbound_chat(conversation: Conversation) -> Chat:
    return Chat(
        organization_id=conversation.organization_id,
        contact_id=conversation.contact_id,
        number_id=conversation.number_id,
        type=ChatType.INBOUND,
        status=ChatStatus.RECEIVED,
    )


def test_a_resolve_waiting_for_an_inbound_message_leaves_it_open(inbox_org):
    writes(inbox_org)
    read_before = conversation_of(inbox_org)  # as the resolve's caller read it
    upserted, done = threading.Event(), threading.Event()

    def customer_writes():
        try:
            with transaction.atomic():
                chat = inbound_chat(read_before)
                with_conversations([chat])  # the row is now locked, until the commit
                chat.save(force_insert=True)
                upserted.set()
                time.sleep(0.3)  # the resolve waits meanwhile
        finally:
            done.set()
            connections.close_all()

    writer = threading.Thread(target=customer_writes)
    writer.start()
    assert upserted.wait(5)
    services.update_conversation(conversation=read_before, status=ConversationStatus.RESOLVED)
    writer.join()

    after = conversation_of(inbox_org)
    assert after.status == ConversationStatus.OPEN
    assert after.unread == 2


def test_an_inbound_message_waiting_for_a_resolve_reopens_it(inbox_org):
    writes(inbox_org)
    resolved, done = threading.Event(), threading.Event()
    conversation = conversation_of(inbox_org)

    def staff_resolves():
        try:
            with transaction.atomic():
                services.update_conversation(
                    conversation=conversation, status=ConversationStatus.RESOLVED
                )
                resolved.set()
                time.sleep(0.3)  # the customer's message waits meanwhile
        finally:
            done.set()
            connections.close_all()

    resolver = threading.Thread(target=staff_resolves)
    resolver.start()
    assert resolved.wait(5)
    writes(inbox_org, "still there?")
    resolver.join()

    after = conversation_of(inbox_org)
    assert after.status == ConversationStatus.OPEN
    assert after.unread == 2
