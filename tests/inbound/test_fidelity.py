"""What real WhatsApp traffic needs beyond the plain text message: numbers written two
ways, senders without a number, Flows replies, other numbers' changes, statuses that
come before their chat, and what edits, deletions and new numbers change.

These tests commit for real (transactional_db): the webhook posted while a send is
under way runs in another thread, on its own connection, as it does in production.
"""

import pytest
from django.db import connections

from business_numbers.gateway import sandbox
from canned_replies import services as reply_services
from contacts.models import Contact
from sending.models import Chat, ChatStatusEvent
from tests.background import run_tasks
from tests.channel import PHONE_NUMBER_ID, set_channel
from tests.factories import ContactFactory, create_chat
from tests.inbound.conftest import APP_SECRET, deliver, envelope, status, statuses, text_message

pytestmark = pytest.mark.django_db(transaction=True)

USER_ID = "US.13491208655302741918"


def message(kind: str, body=None, *, wam_id: str, sender="14155552671", **extra) -> dict:
    item = {"from": sender, "id": wam_id, "timestamp": "1700000000", "type": kind, **extra}
    if body is not None:
        item[kind] = body
    return {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "contacts": [{"profile": {"name": "Ada"}, "wa_id": sender}],
        "messages": [item],
    }


def bsuid_only(text: str, *, wam_id: str, user_id: str = USER_ID) -> dict:
    """A user who adopted a username: WhatsApp gives their user id, not their number."""
    return {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "contacts": [{"profile": {"name": "Grace", "username": "@grace"}, "user_id": user_id}],
        "messages": [
            {
                "from_user_id": user_id,
                "id": wam_id,
                "timestamp": "1700000000",
                "type": "text",
                "text": {"body": text},
            }
        ],
    }


@pytest.fixture
def cloud_webhook_org(cloud_org):
    set_channel(cloud_org, app_secret=APP_SECRET)
    return cloud_org


# 1. Numbers written two ways ----------------------------------------------------------


@pytest.mark.parametrize(
    ("whatsapp_sends", "client_sends"),
    [
        ("5215512345678", "+5215512345678"),  # Mexico: WhatsApp's old mobile prefix
        ("5215512345678", "+52 55 1234 5678"),
        ("551187654321", "+5511987654321"),  # Brazil: an account older than the ninth digit
        ("5491112345678", "+54 9 11 1234-5678"),  # Argentina: one form already
    ],
)
def test_the_inbound_number_and_the_numbers_clients_send_are_one_contact(
    webhook_org, api, whatsapp_sends, client_sends
):
    response = deliver(
        webhook_org, envelope(text_message("hola", sender=whatsapp_sends, wam_id="wamid.MX1"))
    )
    assert response.json()["processed"] == {
        "statuses": 0,
        "messages": 1,
        "duplicates": 0,
        "skipped": 0,
    }
    sent = api.post("/api/send", {"phone": client_sends, "message": "hi"}, format="json")
    assert sent.status_code == 200, sent.json()
    contact = Contact.objects.get()
    assert contact.chats.count() == 2


def test_replies_go_to_the_number_in_the_form_whatsapp_accepts(webhook_org):
    reply_services.create_canned_reply(
        organization=webhook_org,
        name="h",
        trigger="hola",
        match_criteria="contains",
        response="¡Hola!",
    )
    deliver(webhook_org, envelope(text_message("hola", sender="5215512345678")))
    run_tasks()
    [sent] = sandbox.sent_messages(webhook_org.id)
    assert sent.payload["to"] == "525512345678"


# 2. Senders without a phone number ----------------------------------------------------


def test_a_message_without_a_number_is_recorded_under_the_users_id(webhook_org):
    processed = deliver(webhook_org, envelope(bsuid_only("hello", wam_id="wamid.U1"))).json()
    assert processed["processed"]["messages"] == 1
    chat = Chat.objects.get(wam_id="wamid.U1")
    assert (chat.contact.phone, chat.contact.user_id, chat.contact.first_name) == (
        "",
        USER_ID,
        "Grace",
    )
    assert chat.metadata == {"type": "text", "text": {"body": "hello"}}


def test_two_users_without_numbers_are_two_contacts_and_each_is_found_again(webhook_org):
    deliver(webhook_org, envelope(bsuid_only("a", wam_id="wamid.U1")))
    deliver(
        webhook_org, envelope(bsuid_only("b", wam_id="wamid.U2", user_id="BR.1502576394655843"))
    )
    deliver(webhook_org, envelope(bsuid_only("c", wam_id="wamid.U3")))
    assert Contact.objects.count() == 2
    assert Contact.objects.get(user_id=USER_ID).chats.count() == 2


def test_the_number_when_it_comes_joins_the_users_contact(webhook_org):
    deliver(webhook_org, envelope(bsuid_only("a", wam_id="wamid.U1")))
    later = text_message("b", sender="14155552671", wam_id="wamid.U2")
    later["contacts"][0]["user_id"] = USER_ID
    later["messages"][0]["from_user_id"] = USER_ID
    deliver(webhook_org, envelope(later))
    contact = Contact.objects.get()
    assert (contact.phone, contact.user_id, contact.chats.count()) == ("14155552671", USER_ID, 2)


def test_a_known_number_gains_the_users_id(webhook_org):
    known = ContactFactory(organization=webhook_org, phone="14155552671")
    item = text_message("b", sender="14155552671", wam_id="wamid.U2")
    item["contacts"][0]["user_id"] = USER_ID
    deliver(webhook_org, envelope(item))
    known.refresh_from_db()
    assert known.user_id == USER_ID and Contact.objects.count() == 1


def test_the_auto_reply_to_a_user_without_a_number_is_addressed_to_their_id(
    cloud_webhook_org, graph
):
    reply_services.create_canned_reply(
        organization=cloud_webhook_org,
        name="h",
        trigger="hours",
        match_criteria="contains",
        response="9 to 5",
    )
    deliver(cloud_webhook_org, envelope(bsuid_only("your hours?", wam_id="wamid.U1")))
    run_tasks()
    request = graph.requests[-1]
    assert request.json["recipient"] == USER_ID
    assert "to" not in request.json
    assert request.json["text"]["body"] == "9 to 5"
    reply = Chat.objects.get(type="outbound")
    assert (reply.status, reply.contact.user_id) == ("accepted", USER_ID)


# 3. Every message type, text matched only where there is text -------------------------


def test_a_flows_reply_is_recorded_and_not_matched(webhook_org):
    reply_services.create_canned_reply(
        organization=webhook_org, name="s", trigger="sent", match_criteria="contains", response="x"
    )
    nfm = {
        "type": "nfm_reply",
        "nfm_reply": {
            "response_json": '{"flow_token": "t", "rating": "4"}',
            "body": "Sent",
            "name": "flow",
        },
    }
    processed = deliver(webhook_org, envelope(message("interactive", nfm, wam_id="wamid.F1")))
    assert processed.json()["processed"]["messages"] == 1
    chat = Chat.objects.get(wam_id="wamid.F1")
    # Kept as sent, and its answers parsed in `choice`.
    assert chat.metadata == {
        "type": "interactive",
        "interactive": nfm,
        "choice": {
            "type": "nfm_reply",
            "name": "flow",
            "title": "Sent",
            "response": {"flow_token": "t", "rating": "4"},
        },
    }
    run_tasks()
    assert sandbox.sent_messages() == []


def test_an_interactive_message_with_only_errors_is_recorded_with_them(webhook_org):
    errors = [{"code": 131000, "title": "Something went wrong"}]
    payload = message("interactive", wam_id="wamid.E1")
    payload["errors"] = errors  # WhatsApp puts them beside the message, not in it
    deliver(webhook_org, envelope(payload))
    assert Chat.objects.get(wam_id="wamid.E1").metadata == {"type": "interactive", "errors": errors}


def test_a_type_nobody_knows_yet_is_recorded(webhook_org):
    deliver(webhook_org, envelope(message("hologram", {"id": "42"}, wam_id="wamid.H1")))
    assert Chat.objects.get(wam_id="wamid.H1").metadata == {
        "type": "hologram",
        "hologram": {"id": "42"},
    }


def test_a_list_reply_is_matched_by_its_title(webhook_org):
    reply_services.create_canned_reply(
        organization=webhook_org,
        name="p",
        trigger="pricing",
        match_criteria="exact match",
        response="$5",
    )
    reply = {
        "type": "list_reply",
        "list_reply": {"id": "p", "title": "Pricing", "description": "d"},
    }
    deliver(webhook_org, envelope(message("interactive", reply, wam_id="wamid.L1")))
    run_tasks()
    assert [m.payload["text"]["body"] for m in sandbox.sent_messages()] == ["$5"]


# 4. Another phone number's traffic ----------------------------------------------------


def test_another_numbers_message_is_neither_recorded_nor_answered(cloud_webhook_org, graph):
    reply_services.create_canned_reply(
        organization=cloud_webhook_org,
        name="h",
        trigger="hi",
        match_criteria="contains",
        response="x",
    )
    ours = text_message("hi", wam_id="wamid.OURS")
    theirs = text_message("hi", wam_id="wamid.THEIRS", sender="4915112345678")
    theirs["metadata"]["phone_number_id"] = "999000999000"
    processed = deliver(cloud_webhook_org, envelope(theirs, ours)).json()["processed"]
    assert (processed["messages"], processed["other_number"], processed["skipped"]) == (1, 1, 0)
    assert list(Chat.objects.values_list("wam_id", flat=True)) == ["wamid.OURS"]
    assert not Contact.objects.filter(phone="4915112345678").exists()
    run_tasks()
    assert len([r for r in graph.requests if r.method == "POST"]) == 1


def test_another_numbers_status_does_not_touch_our_chat(webhook_org):
    set_channel(webhook_org, phone_number_id=PHONE_NUMBER_ID)
    contact = ContactFactory(organization=webhook_org)
    create_chat(organization=webhook_org, contact=contact, wam_id="wamid.S", status="accepted")
    theirs = statuses(status("wamid.S", "read", 1700000000))
    theirs["metadata"]["phone_number_id"] = "999000999000"
    deliver(webhook_org, envelope(theirs))
    assert Chat.objects.get().status == "accepted"
    assert not ChatStatusEvent.objects.exists()


# 5. A status before its chat -----------------------------------------------------------


def test_statuses_posted_while_the_send_is_under_way_reach_its_chat(api, cloud_webhook_org, graph):
    """Meta posts `sent` and `delivered` before our send has recorded its chat."""
    graph.reply(
        json={
            "messaging_product": "whatsapp",
            "contacts": [{"input": "+14155552671", "wa_id": "14155552671"}],
            "messages": [{"id": "wamid.EARLY"}],
        }
    )

    def meta_is_quick(request):
        try:
            deliver(
                cloud_webhook_org,
                envelope(
                    statuses(
                        status("wamid.EARLY", "sent", 1700000001),
                        status("wamid.EARLY", "delivered", 1700000002),
                    )
                ),
            )
        finally:
            connections.close_all()

    graph.on_request = meta_is_quick
    response = api.post("/api/send", {"phone": "+14155552671", "message": "hi"}, format="json")
    assert response.status_code == 200
    chat = Chat.objects.get(wam_id="wamid.EARLY")
    assert chat.status == "delivered"
    assert chat.status_events.count() == 2
    assert not ChatStatusEvent.objects.filter(chat__isnull=True).exists()


def test_a_failure_kept_aside_fails_the_chat_when_it_is_recorded(api, cloud_webhook_org, graph):
    failed = status(
        "wamid.FAKE000001",
        "failed",
        1700000001,
        errors=[{"code": 131026, "title": "Message undeliverable"}],
    )
    deliver(cloud_webhook_org, envelope(statuses(failed)))
    api.post("/api/send", {"phone": "+14155552671", "message": "hi"}, format="json")
    chat = Chat.objects.get(wam_id="wamid.FAKE000001")
    assert (chat.status, chat.error_code, chat.error_title) == (
        "failed",
        131026,
        "Message undeliverable",
    )


# 6. What was thrown away ----------------------------------------------------------------


def test_played_follows_read(webhook_org):
    contact = ContactFactory(organization=webhook_org)
    create_chat(organization=webhook_org, contact=contact, wam_id="wamid.V", status="sent")
    deliver(
        webhook_org,
        envelope(
            statuses(status("wamid.V", "played", 1700000003), status("wamid.V", "read", 1700000002))
        ),
    )
    assert Chat.objects.get().status == "played"
    deliver(webhook_org, envelope(statuses(status("wamid.V", "delivered", 1700000004))))
    assert Chat.objects.get().status == "played"


def test_context_referral_and_forwarded_are_kept(webhook_org):
    context = {"from": "15550001111", "id": "wamid.ORIGINAL", "forwarded": True}
    referral = {"source_type": "ad", "source_id": "ADID", "ctwa_clid": "CLID", "headline": "Sale"}
    payload = message("text", {"body": "hi"}, wam_id="wamid.C1", context=context, referral=referral)
    deliver(webhook_org, envelope(payload))
    metadata = Chat.objects.get().metadata
    assert (metadata["context"], metadata["referral"]) == (context, referral)


def test_an_unsupported_message_keeps_its_errors(webhook_org):
    errors = [{"code": 131051, "title": "Message type unknown"}]
    deliver(webhook_org, envelope(message("unsupported", wam_id="wamid.X1", errors=errors)))
    assert Chat.objects.get().metadata == {"type": "unsupported", "errors": errors}


def test_an_edit_changes_the_original_message_once(webhook_org):
    deliver(webhook_org, envelope(text_message("helo", wam_id="wamid.ORIG")))
    edit = {
        "original_message_id": "wamid.ORIG",
        "message": {"type": "text", "text": {"body": "hello"}},
    }
    payload = envelope(message("edit", edit, wam_id="wamid.EDIT"))
    assert deliver(webhook_org, payload).json()["processed"]["messages"] == 1
    assert deliver(webhook_org, payload).json()["processed"]["duplicates"] == 1
    [chat] = Chat.objects.all()
    assert chat.wam_id == "wamid.ORIG"
    assert chat.metadata["text"] == {"body": "hello"}
    assert [c["id"] for c in chat.metadata["changes"]] == ["wamid.EDIT"]


def test_a_revoke_marks_the_original_message(webhook_org):
    deliver(webhook_org, envelope(text_message("oops", wam_id="wamid.ORIG")))
    revoke = {"original_message_id": "wamid.ORIG"}
    deliver(webhook_org, envelope(message("revoke", revoke, wam_id="wamid.DEL")))
    [chat] = Chat.objects.all()
    assert chat.metadata["revoked"] is True
    assert chat.metadata["changes"][0]["type"] == "revoke"


def test_an_edit_of_a_message_we_never_saw_is_recorded_itself(webhook_org):
    edit = {
        "original_message_id": "wamid.UNKNOWN",
        "message": {"type": "text", "text": {"body": "x"}},
    }
    deliver(webhook_org, envelope(message("edit", edit, wam_id="wamid.EDIT")))
    assert Chat.objects.get().metadata == {"type": "edit", "edit": edit}


def test_a_new_number_moves_the_contact(webhook_org):
    deliver(webhook_org, envelope(text_message("hi", sender="972987654321", wam_id="wamid.A")))
    change = {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "messages": [
            {
                "from": "972987654321",
                "id": "wamid.SYS",
                "timestamp": "1753851315",
                "type": "system",
                "system": {
                    "body": "User A changed from 972987654321 to 972912345678",
                    "wa_id": "972912345678",
                    "type": "user_changed_number",
                },
            }
        ],
    }
    deliver(webhook_org, envelope(change))
    deliver(webhook_org, envelope(text_message("again", sender="972912345678", wam_id="wamid.B")))
    contact = Contact.objects.get()
    assert contact.phone == "972912345678"
    assert sorted(contact.chats.values_list("wam_id", flat=True)) == [
        "wamid.A",
        "wamid.B",
        "wamid.SYS",
    ]


def test_a_new_user_id_moves_the_contact(webhook_org):
    deliver(webhook_org, envelope(bsuid_only("hi", wam_id="wamid.A", user_id="CO.1234567890")))
    change = {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "messages": [
            {
                "id": "wamid.SYS",
                "timestamp": "1753851315",
                "type": "system",
                "system": {
                    "body": "User changed from CO.1234567890 to MX.0987654321",
                    "user_id": "MX.0987654321",
                    "previous_user_id": "CO.1234567890",
                    "type": "user_changed_user_id",
                },
            }
        ],
    }
    deliver(webhook_org, envelope(change))
    contact = Contact.objects.get()
    assert contact.user_id == "MX.0987654321"
    assert contact.chats.count() == 2


@pytest.mark.skipif(
    connections["default"].vendor != "postgresql",
    reason="SQLite runs one write transaction at a time: there is no race to lose",
)
def test_a_status_racing_the_send_always_reaches_its_chat(cloud_webhook_org, graph):
    """The send and Meta's status webhook, started together many times: whichever
    commits second must see the other's row (the lock in sending/services/statuses.py)."""
    import random
    import threading

    from tests.conftest import client_for

    rounds = 25
    for index in range(rounds):
        graph.reply(
            json={
                "messaging_product": "whatsapp",
                "contacts": [{"input": "+14155552671", "wa_id": "14155552671"}],
                "messages": [{"id": f"wamid.RACE{index}"}],
            }
        )
    api = client_for(cloud_webhook_org)
    for index in range(rounds):
        barrier = threading.Barrier(2)
        payload = envelope(statuses(status(f"wamid.RACE{index}", "delivered", 1700000000 + index)))

        def send(barrier=barrier):
            barrier.wait()
            try:
                api.post("/api/send", {"phone": "+14155552671", "message": "hi"}, format="json")
            finally:
                connections.close_all()

        def webhook(barrier=barrier, payload=payload):
            barrier.wait()
            threading.Event().wait(random.uniform(0, 0.03))
            try:
                deliver(cloud_webhook_org, payload)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=send), threading.Thread(target=webhook)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert Chat.objects.filter(type="outbound").count() == rounds
    assert set(Chat.objects.values_list("status", flat=True)) == {"delivered"}
    assert not ChatStatusEvent.objects.filter(chat__isnull=True).exists()
