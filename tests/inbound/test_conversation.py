"""Customers and the conversation (docs/webhooks.md): marketing
preferences, messages sent from the WhatsApp Business app, imported history, edits and
revokes, `warning` / `deleted` statuses, WhatsApp's own times and a status's pricing.

Each field is driven through the signed webhook with real payloads
(tests/inbound/payloads/conversation, each file naming its source), delivered twice
(nothing changes the second time: no second chat, no second event) and beside a bad
item (skipped alone, never a 500)."""

import copy
import json
from pathlib import Path

import pytest

from contacts.models import Contact
from events import services
from events.models import Emission
from sending.models import AutoReply, Chat, ChatStatusEvent
from tests.channel import set_channel
from tests.factories import CannedReplyFactory, ContactFactory
from tests.inbound.conftest import APP_SECRET, deliver, envelope, text_message
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).parent / "payloads"


def payload(file: str, name: str) -> dict:
    document = json.loads((PAYLOADS / file).read_text())
    assert document["_source"], f"{file} does not say where its payloads come from"
    return copy.deepcopy(document["payloads"][name])


def conversation(name: str) -> dict:
    file, _, key = name.partition(":")
    return payload(f"conversation/{file}.json", key)


def value_of(webhook: dict) -> dict:
    return webhook["entry"][0]["changes"][0]["value"]


def receiving(org, webhook: dict):
    """The organization whose number the payload was sent to, listening to every event."""
    set_channel(
        org, app_secret=APP_SECRET, phone_number_id=value_of(webhook)["metadata"]["phone_number_id"]
    )
    if not services.subscribed_endpoints(org.pk, "message.received"):
        services.create_endpoint(organization=org, url="https://example.com/hook")
    return org


def events() -> list[dict]:
    return [json.loads(emission.body) for emission in Emission.objects.order_by("id")]


def kinds() -> list[str]:
    return [event["type"] for event in events()]


def processed(response) -> dict:
    assert response.status_code == 200, response.content
    return response.json()["processed"]


# Marketing preferences ----------------------------------------------------------------


def test_stop_promotions_opts_the_contact_out_once(org_a, api):
    webhook = conversation("user_preferences:stop")
    receiving(org_a, webhook)
    contact = ContactFactory(organization=org_a, phone="16505551234", opted_out=False)

    assert processed(deliver(org_a, webhook))["preferences"] == 1
    contact.refresh_from_db()
    assert contact.opted_out is True
    assert kinds() == ["contact.updated"]
    assert events()[0]["data"]["uuid"] == str(contact.uuid)
    assert api.get(f"/api/contacts/{contact.uuid}").json()["data"]["opted_out"] in (1, True)

    deliver(org_a, webhook)  # redelivered: nothing changes, nothing is emitted
    assert kinds() == ["contact.updated"]


def test_resume_opts_the_contact_back_in(org_a):
    webhook = conversation("user_preferences:resume")  # pywa's fixture
    receiving(org_a, webhook)
    contact = ContactFactory(organization=org_a, phone="16505551234", opted_out=True)

    deliver(org_a, webhook)

    contact.refresh_from_db()
    assert contact.opted_out is False
    assert kinds() == ["contact.updated"]


def test_a_preference_of_a_new_number_creates_its_contact_opted_out(org_a):
    webhook = conversation("user_preferences:stop")
    receiving(org_a, webhook)

    deliver(org_a, webhook)

    contact = Contact.objects.get(organization=org_a)
    assert (contact.phone, contact.opted_out) == ("16505551234", True)


def test_an_unknown_preference_is_skipped_beside_a_good_one(org_a):
    webhook = conversation("user_preferences:stop")
    unknown = conversation("user_preferences:unknown_category")  # pywa's fixture
    value_of(webhook)["user_preferences"] += value_of(unknown)["user_preferences"]
    value_of(webhook)["user_preferences"].append("not an object")
    receiving(org_a, webhook)

    counts = processed(deliver(org_a, webhook))

    assert (counts["preferences"], counts["skipped"]) == (1, 2)
    assert Contact.objects.get(organization=org_a).opted_out is True


def test_a_preference_for_another_number_is_left_alone(org_a):
    webhook = conversation("user_preferences:stop")
    set_channel(org_a, app_secret=APP_SECRET, phone_number_id="999999999")

    assert processed(deliver(org_a, webhook))["other_number"] == 1
    assert not Contact.objects.exists()


# Messages sent from the WhatsApp Business app -------------------------------------------


def test_a_business_app_echo_is_an_outbound_chat_and_never_auto_replied(org_a, api):
    webhook = conversation("smb_message_echoes:meta_text")
    receiving(org_a, webhook)
    CannedReplyFactory(organization=org_a, trigger="info")

    assert processed(deliver(org_a, webhook))["echoes"] == 1

    chat = Chat.objects.get()
    assert (chat.type, chat.status, chat.source) == ("outbound", "sent", "business_app")
    assert chat.contact.phone == "16505551234"
    data = api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert data["source"] == "business_app"
    assert data["sent_at"] == "2025-02-12T00:43:44.000000Z"  # the echo's own timestamp
    assert json.loads(data["metadata"])["text"]["body"].startswith("Here's the info")
    assert kinds() == ["contact.created", "conversation.created", "message.sent"]
    assert events()[2]["data"]["uuid"] == str(chat.uuid)
    assert not AutoReply.objects.exists()

    again = processed(deliver(org_a, webhook))
    assert (again["duplicates"], Chat.objects.count()) == (1, 1)
    assert kinds() == ["contact.created", "conversation.created", "message.sent"]


def test_an_echo_names_its_user_by_number_and_user_id(org_a):
    webhook = conversation("smb_message_echoes:pywa_text")
    receiving(org_a, webhook)

    deliver(org_a, webhook)

    contact = Chat.objects.get(wam_id="wamid.ECHOTEXT").contact
    assert (contact.phone, contact.user_id) == ("972987654321", "US.13491208655302741918")
    assert contact.first_name == "Test Name"
    metadata = Chat.objects.get().metadata
    assert metadata == {"type": "text", "text": {"body": "Test message"}}


def test_message_echoes_inside_a_messages_change_are_recorded_too(org_a):
    webhook = conversation("smb_message_echoes:pywa_text")
    webhook["entry"][0]["changes"][0]["field"] = "messages"
    receiving(org_a, webhook)

    assert processed(deliver(org_a, webhook))["echoes"] == 1
    assert Chat.objects.get().source == "business_app"


def test_a_bad_echo_is_skipped_beside_a_good_one(org_a):
    webhook = conversation("smb_message_echoes:meta_text")
    good = value_of(webhook)["message_echoes"][0]
    value_of(webhook)["message_echoes"] = [
        {**good, "id": 12345},  # not a message id
        {**good, "id": "wamid.NOBODY", "to": "not a number"},
        good,
    ]
    receiving(org_a, webhook)

    counts = processed(deliver(org_a, webhook))

    assert (counts["echoes"], counts["skipped"]) == (1, 2)
    assert Chat.objects.get().wam_id == good["id"]


def test_a_status_before_its_echo_waits_for_it(org_a):
    webhook = conversation("smb_message_echoes:meta_text")
    receiving(org_a, webhook)
    wam_id = value_of(webhook)["message_echoes"][0]["id"]
    read = envelope(
        {
            "messaging_product": "whatsapp",
            "metadata": value_of(webhook)["metadata"],
            "statuses": [
                {"id": wam_id, "status": "read", "timestamp": "1739321090", "recipient_id": "1"}
            ],
        }
    )
    deliver(org_a, read)

    deliver(org_a, webhook)

    assert Chat.objects.get().status == "read"


# History --------------------------------------------------------------------------------


def test_history_is_imported_oldest_first_with_one_event(org_a, api):
    webhook = conversation("history:chunk")
    receiving(org_a, webhook)
    # Neither a canned reply nor an opt-out word acts on the past.
    CannedReplyFactory(organization=org_a, trigger="open tomorrow")

    assert processed(deliver(org_a, webhook))["imported"] == 2

    first, second = Chat.objects.order_by("id")
    assert (first.wam_id, first.type, first.status, first.source) == (
        "wamid.HISTORY1",
        "inbound",
        "received",
        "customer",
    )
    assert (second.wam_id, second.type, second.status, second.source) == (
        "wamid.HISTORY2",
        "outbound",
        "read",
        "business_app",
    )
    assert first.contact_id == second.contact_id
    assert first.metadata["history_context"] == {"status": "READ"}
    listed = api.get("/api/chats").json()["data"]
    assert [chat["sent_at"] for chat in listed] == [
        "2025-02-10T23:42:35.000000Z",
        "2025-02-10T23:42:40.000000Z",
    ]
    assert not AutoReply.objects.exists()
    assert kinds() == ["contact.created", "conversation.created", "history.imported"]
    assert events()[2]["data"] == {
        "imported": 2,
        "duplicates": 0,
        "skipped": 0,
        "oldest_sent_at": "2025-02-10T23:42:35.000000Z",
        "newest_sent_at": "2025-02-10T23:42:40.000000Z",
        "chunks": [{"phase": 0, "chunk_order": 1, "progress": 55}],
    }

    again = processed(deliver(org_a, webhook))  # redelivered
    assert (again["duplicates"], Chat.objects.count()) == (2, 2)
    assert kinds() == ["contact.created", "conversation.created", "history.imported"]


def test_a_bad_past_message_is_skipped_beside_the_good_ones(org_a):
    webhook = conversation("history:chunk")
    thread = value_of(webhook)["history"][0]["threads"][0]
    thread["messages"].append({**thread["messages"][0], "id": None})
    value_of(webhook)["history"][0]["threads"].append({"id": "not a number", "messages": [{}]})
    receiving(org_a, webhook)

    counts = processed(deliver(org_a, webhook))

    assert (counts["imported"], counts["skipped"]) == (2, 2)
    [imported] = [event["data"] for event in events() if event["type"] == "history.imported"]
    assert (imported["imported"], imported["skipped"]) == (2, 2)


def test_a_declined_history_records_nothing(org_a):
    webhook = conversation("history:declined")
    receiving(org_a, webhook)

    counts = processed(deliver(org_a, webhook))

    assert counts["skipped"] == 0 and not Chat.objects.exists()
    assert kinds() == []


def test_media_ids_sent_later_reach_the_imported_message(org_a):
    webhook = conversation("history:chunk")
    later = copy.deepcopy(webhook)
    message = value_of(later)["history"][0]["threads"][0]["messages"][1]
    message.pop("text")
    message.update(type="image", image={"id": "1479537139650973", "mime_type": "image/jpeg"})
    receiving(org_a, webhook)
    deliver(org_a, webhook)

    deliver(org_a, later)

    chat = Chat.objects.get(wam_id="wamid.HISTORY1")
    assert chat.media is not None and chat.media.media_id == "1479537139650973"
    assert chat.metadata["type"] == "image"


# Edits and revokes ------------------------------------------------------------------------


def original_message(webhook: dict) -> dict:
    """The customer's message an edit or revoke of pywa's fixtures names."""
    value = value_of(webhook)
    item = value["messages"][0]
    return {
        **{key: value[key] for key in ("messaging_product", "metadata", "contacts")},
        "messages": [
            {
                "from": item["from"],
                "id": item[item["type"]]["original_message_id"],
                "timestamp": "1697044900",
                "type": "text",
                "text": {"body": "Original text"},
            }
        ],
    }


def test_an_edit_is_message_updated_once_and_a_revoke_message_deleted(org_a, api):
    edit = payload("pywa_edits.json", "edit_text")
    revoke = payload("pywa_edits.json", "revoke")
    receiving(org_a, edit)
    deliver(org_a, envelope(original_message(edit)))

    deliver(org_a, edit)
    deliver(org_a, edit)  # redelivered

    chat = Chat.objects.get(wam_id="wamid.zzzzzz")
    assert kinds() == [
        "contact.created",
        "conversation.created",
        "message.received",
        "message.updated",
    ]
    updated = events()[3]["data"]
    assert updated == api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert json.loads(updated["metadata"])["text"]["body"] == "Text was edited"

    deliver(org_a, revoke)
    deliver(org_a, revoke)

    assert kinds()[4:] == ["message.deleted"]
    assert json.loads(events()[4]["data"]["metadata"])["revoked"] is True
    assert Chat.objects.count() == 1


def test_the_business_revoking_its_own_echo_is_message_deleted(org_a):
    webhook = conversation("smb_message_echoes:meta_text")
    receiving(org_a, webhook)
    deliver(org_a, webhook)
    original = value_of(webhook)["message_echoes"][0]
    value_of(webhook)["message_echoes"] = [
        {
            **{key: original[key] for key in ("from", "to", "timestamp")},
            "id": "wamid.REVOKEECHO",
            "type": "revoke",
            "revoke": {"original_message_id": original["id"]},
        }
    ]

    deliver(org_a, webhook)

    assert kinds() == [
        "contact.created",
        "conversation.created",
        "message.sent",
        "message.deleted",
    ]
    assert Chat.objects.get().metadata["revoked"] is True


# Times, prices, warning and deleted ------------------------------------------------------


def test_an_inbound_message_keeps_whatsapps_time(org_a, api):
    receiving(org_a, envelope(text_message("hi")))
    deliver(org_a, envelope(text_message("hi", wam_id="wamid.TIMED")))

    data = api.get(f"/api/chats/{Chat.objects.get().uuid}").json()["data"]
    assert (data["sent_at"], data["source"]) == ("2023-11-14T22:13:20.000000Z", "customer")


def test_a_status_keeps_its_pricing_and_conversation(org_a, api):
    sent = conversation("statuses:captured_sent")
    receiving(org_a, sent)
    status = value_of(sent)["statuses"][0]
    chat = ChatFactory(organization=org_a, wam_id=status["id"])

    deliver(org_a, sent)
    deliver(org_a, conversation("statuses:captured_delivered"))
    deliver(org_a, sent)  # redelivered

    history = api.get(f"/api/chats/{chat.uuid}").json()["data"]["statuses"]
    assert [entry["status"] for entry in history] == ["sent", "delivered"]
    assert history[0]["pricing"] == {
        "billable": True,
        "pricing_model": "CBP",
        "category": "service",
    }
    assert history[0]["conversation"] == status["conversation"]
    assert history[1]["conversation"] == {
        "id": "a75d17ad06104c51166f948319b03c6a",
        "origin": {"type": "service"},
    }


def test_a_pricing_that_is_not_an_object_is_dropped_and_the_status_kept(org_a):
    sent = conversation("statuses:captured_sent")
    receiving(org_a, sent)
    value_of(sent)["statuses"][0]["pricing"] = "free"
    ChatFactory(organization=org_a, wam_id=value_of(sent)["statuses"][0]["id"])

    assert processed(deliver(org_a, sent))["statuses"] == 1
    event = ChatStatusEvent.objects.get()
    assert event.pricing is None and event.conversation is not None


def test_warning_and_deleted_are_kept_without_moving_the_chat(org_a, api):
    warning = conversation("statuses:warning")
    receiving(org_a, warning)
    chat = ChatFactory(organization=org_a, wam_id="wamid.xyzxyz", status="delivered")

    assert processed(deliver(org_a, warning))["statuses"] == 1
    assert processed(deliver(org_a, conversation("statuses:deleted")))["statuses"] == 1
    assert processed(deliver(org_a, warning))["duplicates"] == 1

    data = api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert data["status"] == "delivered"
    assert [entry["status"] for entry in data["statuses"]] == ["warning", "deleted"]
    assert "message.status.update" not in kinds()


def test_the_chat_list_shows_source_and_sent_at_in_the_same_queries(
    org_a, api, django_assert_num_queries
):
    webhook = conversation("history:chunk")
    receiving(org_a, webhook)
    deliver(org_a, webhook)
    ChatFactory.create_batch(8, organization=org_a)

    with django_assert_num_queries(3):  # token, page (with contacts), count
        listed = api.get("/api/chats").json()["data"]

    assert [chat["source"] for chat in listed] == ["customer", "business_app"] + ["api"] * 8
    assert [chat["sent_at"] is None for chat in listed] == [False, False] + [True] * 8
