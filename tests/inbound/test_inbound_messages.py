"""Inbound messages: recorded once, contacts found or created, canned replies sent back.

Auto-replies are tasks, enqueued in the webhook's transaction; these tests commit for
real (transactional_db), as the webhook does, and run the tasks as a worker would.
"""

import threading

import pytest
from django.core.management import call_command
from django.db import connection

from business_numbers.gateway import sandbox
from canned_replies import services as reply_services
from contacts.models import Contact
from devtools.cloud_api_server import graph_error
from sending.models import Chat
from tests.background import run_tasks
from tests.channel import set_channel
from tests.factories import ContactFactory
from tests.inbound.conftest import APP_SECRET, button_reply, deliver, envelope, text_message

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def cloud_webhook_org(cloud_org):
    """Organization A on the fake Cloud API, able to receive signed webhooks."""
    set_channel(cloud_org, app_secret=APP_SECRET)
    return cloud_org


def canned(org, trigger, criteria="contains", text="Auto answer"):
    return reply_services.create_canned_reply(
        organization=org, name=trigger, trigger=trigger, match_criteria=criteria, response=text
    )


def replies_sent(org):
    run_tasks()
    return [m.payload["text"]["body"] for m in sandbox.sent_messages(org.id)]


def test_message_is_recorded_and_creates_the_contact_with_the_profile_name(webhook_org):
    response = deliver(
        webhook_org,
        envelope(
            text_message("Hi there", sender="4915112345678", name="Grace", wam_id="wamid.IN1")
        ),
    )
    assert response.json()["processed"]["messages"] == 1
    chat = Chat.objects.get(wam_id="wamid.IN1")
    assert (chat.type, chat.status) == ("inbound", "received")
    assert chat.metadata == {"type": "text", "text": {"body": "Hi there"}}
    assert (chat.contact.phone, chat.contact.first_name, chat.contact.created_by) == (
        "4915112345678",
        "Grace",
        0,
    )


def test_existing_contact_is_reused_and_keeps_its_name(webhook_org):
    known = ContactFactory(organization=webhook_org, phone="14155552671", first_name="Ada")
    deliver(webhook_org, envelope(text_message("hi", name="Someone Else")))
    assert Chat.objects.get().contact == known
    known.refresh_from_db()
    assert known.first_name == "Ada"
    assert Contact.objects.count() == 1


def test_the_sender_is_only_a_live_contact_of_the_organization(webhook_org, org_b):
    from contacts.services import delete_contact

    theirs = ContactFactory(organization=org_b, phone="14155552671")
    gone = ContactFactory(organization=webhook_org, phone="14155552671")
    delete_contact(contact=gone)
    by_id = ContactFactory(organization=webhook_org, phone="", user_id="US.1234")

    deliver(webhook_org, envelope(text_message("hello")))
    message = text_message("hi", sender="")
    message["messages"][0].pop("from")
    message["messages"][0]["from_user_id"] = "US.1234"
    deliver(webhook_org, envelope(message))

    new = Contact.objects.live().get(organization=webhook_org, phone="14155552671")
    assert new.pk not in (theirs.pk, gone.pk)
    assert Chat.objects.get(metadata__text__body="hello").contact == new
    assert Chat.objects.get(metadata__text__body="hi").contact == by_id


def test_a_redelivered_message_is_recorded_and_answered_once(webhook_org):
    canned(webhook_org, "hello")
    payload = envelope(text_message("hello", wam_id="wamid.DUP"))
    deliver(webhook_org, payload)
    second = deliver(webhook_org, payload).json()["processed"]
    assert second["duplicates"] == 1 and second["messages"] == 0
    assert Chat.objects.filter(type="inbound").count() == 1
    assert replies_sent(webhook_org) == ["Auto answer"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent connections")
def test_concurrent_deliveries_record_the_message_once(webhook_org):
    canned(webhook_org, "hello")
    payload = envelope(text_message("hello", wam_id="wamid.RACE"))
    barrier = threading.Barrier(4)
    results = []

    def send():
        from django.db import connections

        barrier.wait()
        try:
            response = deliver(webhook_org, payload)
            results.append((response.status_code, response.json().get("processed")))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [status for status, _ in results] == [200] * 4
    # One recorded it; the others met its unique id, rolled their message back (the new
    # sender's contact with it) and counted a duplicate.
    assert sum(processed["messages"] for _, processed in results) == 1
    assert sum(processed["duplicates"] for _, processed in results) == 3
    assert Chat.objects.filter(wam_id="wamid.RACE").count() == 1
    assert Contact.objects.filter(organization=webhook_org).count() == 1
    assert replies_sent(webhook_org) == ["Auto answer"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent connections")
def test_concurrent_webhooks_from_new_senders_keep_the_contact_count_exact(webhook_org):
    """The inbound webhook writes the contacts' count just before its commit
    (events.services.at_batch_end): 12 webhooks at once, from 6 new senders, two
    messages each, and a copy of one of them: 6 contacts, counted 6."""
    from contacts import selectors
    from contacts.models import ContactBlock

    payloads = [
        envelope(text_message("hi", sender=f"4915123400{n % 6:03d}", wam_id=f"wamid.C{n}"))
        for n in range(12)
    ]
    payloads.append(payloads[0])  # WhatsApp sending one again: its savepoint rolls back
    barrier = threading.Barrier(len(payloads))
    statuses = []

    def send(payload):
        from django.db import connections

        barrier.wait()
        try:
            statuses.append(deliver(webhook_org, payload).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send, args=(payload,)) for payload in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert statuses == [200] * len(payloads)
    assert Chat.objects.filter(organization=webhook_org, type="inbound").count() == 12
    assert Contact.objects.live().filter(organization=webhook_org).count() == 6
    total = ContactBlock.objects.get(organization=webhook_org, block=ContactBlock.TOTAL)
    assert total.live == 6 == selectors.live_contact_count(organization_id=webhook_org.pk)


@pytest.mark.parametrize(
    "criteria, text, answered",
    [
        ("contains", "well hello there", True),
        ("exact match", " HELLO ", True),
        ("exact match", "hello you", False),
        ("starts with", "Hello you", True),
        ("ends with", "oh, hello", True),
        ("ends with", "hello you", False),
    ],
)
def test_each_match_type_answers_through_the_sandbox(webhook_org, criteria, text, answered):
    canned(webhook_org, "hello", criteria, text="Hi from us")
    deliver(webhook_org, envelope(text_message(text)))
    assert replies_sent(webhook_org) == (["Hi from us"] if answered else [])
    outbound = Chat.objects.filter(type="outbound")
    assert outbound.count() == (1 if answered else 0)
    if answered:
        reply = outbound.get()
        assert reply.status == "accepted" and reply.contact.phone == "14155552671"
        assert reply.metadata == {"type": "text", "text": {"body": "Hi from us"}}


def test_precedence_exact_then_longest_then_oldest(webhook_org):
    canned(webhook_org, "price", "contains", text="short")
    canned(webhook_org, "price list", "contains", text="long")
    canned(webhook_org, "price list", "exact match", text="exact")
    deliver(webhook_org, envelope(text_message("send me the price list")))
    deliver(webhook_org, envelope(text_message("Price List")))
    assert replies_sent(webhook_org) == ["long", "exact"]


def test_button_replies_are_matched(webhook_org):
    canned(webhook_org, "yes please", "exact match", text="Great!")
    deliver(webhook_org, envelope(button_reply("Yes please")))
    assert replies_sent(webhook_org) == ["Great!"]
    assert Chat.objects.get(type="inbound").metadata["type"] == "interactive"


def test_deleted_and_foreign_replies_never_answer(webhook_org, org_b):
    gone = canned(webhook_org, "hello")
    reply_services.delete_canned_reply(reply=gone)
    canned(org_b, "hello")
    deliver(webhook_org, envelope(text_message("hello")))
    assert replies_sent(webhook_org) == []
    assert sandbox.sent_messages() == []


def test_media_is_recorded_not_matched(webhook_org):
    canned(webhook_org, "image", "contains")
    message = text_message("x")
    message["messages"][0].update(type="image", image={"id": "123", "mime_type": "image/jpeg"})
    del message["messages"][0]["text"]
    deliver(webhook_org, envelope(message))
    assert Chat.objects.get().metadata == {
        "type": "image",
        "image": {"id": "123", "mime_type": "image/jpeg"},
    }
    assert replies_sent(webhook_org) == []


def test_auto_reply_leaves_through_the_cloud_api(cloud_webhook_org, graph):
    org = cloud_webhook_org
    canned(org, "hours", text="9 to 5")
    deliver(org, envelope(text_message("what are your hours?")))
    run_tasks()
    request = graph.requests[-1]
    assert request.path.endswith("/106540352242922/messages")
    assert request.json["to"] == "14155552671"
    assert request.json["text"]["body"] == "9 to 5"
    assert Chat.objects.get(type="outbound").status == "accepted"


def test_a_refused_auto_reply_is_a_failed_chat_not_a_failed_webhook(cloud_webhook_org, graph):
    org = cloud_webhook_org
    canned(org, "hours", text="9 to 5")
    graph.reply(400, graph_error(131047, "Re-engagement message"))
    response = deliver(org, envelope(text_message("hours?")))
    assert response.status_code == 200
    run_tasks()
    failed = Chat.objects.get(type="outbound")
    assert failed.status == "failed" and failed.error_code == 131047


def test_the_auto_reply_to_a_refused_message_is_its_failed_chat(cloud_webhook_org, graph):
    from sending.models import AutoReply

    canned(cloud_webhook_org, "hours", text="9 to 5")
    graph.reply(400, graph_error(131047, "Re-engagement message"))
    deliver(cloud_webhook_org, envelope(text_message("hours?")))

    run_tasks()

    auto_reply = AutoReply.objects.get()
    assert auto_reply.state == "failed"
    assert auto_reply.reply == Chat.objects.get(type="outbound")
    assert (auto_reply.reply.status, auto_reply.reply.error_code) == ("failed", 131047)


def test_a_slow_channel_does_not_slow_the_webhook(cloud_webhook_org, graph, settings):
    import time

    org = cloud_webhook_org
    settings.WHATSAPP_TIMEOUT = 3
    canned(org, "hours", text="9 to 5")
    success = {"messaging_product": "whatsapp", "contacts": [], "messages": [{"id": "wamid.SLOW"}]}
    graph.reply(200, success, delay=1.5)
    started = time.monotonic()
    assert deliver(org, envelope(text_message("hours?"))).status_code == 200
    assert time.monotonic() - started < 1.0
    run_tasks()
    assert Chat.objects.get(type="outbound").status == "accepted"


def test_simulate_inbound_shows_the_auto_reply(org_a, capsys):
    canned(org_a, "hello", text="Welcome!")
    call_command("simulate_inbound", org_a.name, "+14155552671", "Hello!", "--name", "Ada")
    out = capsys.readouterr().out
    assert "Auto-reply (accepted): Welcome!" in out
    assert Contact.objects.get().first_name == "Ada"
    call_command("simulate_inbound", org_a.name, "+14155552671", "nothing matches")
    assert "No canned reply matched" in capsys.readouterr().out


def test_simulate_inbound_refuses_cloud_api_organizations_and_bad_input(org_a):
    from django.core.management import CommandError

    from business_numbers import services as number_services

    with pytest.raises(CommandError, match="No organization"):
        call_command("simulate_inbound", "Nobody", "+14155552671", "x")
    with pytest.raises(CommandError, match="phone"):
        call_command("simulate_inbound", org_a.name, "not a phone", "x")
    number_services.configure_channel(organization=org_a, phone_number_id="1", access_token="t")
    with pytest.raises(CommandError, match="sandbox"):
        call_command("simulate_inbound", org_a.name, "+14155552671", "x")
    assert not Chat.objects.exists()
