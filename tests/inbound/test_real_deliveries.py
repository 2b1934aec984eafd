"""WhatsApp's real deliveries that used to be lost (docs/webhooks.md): a history's media
delivered later, calls, a change without a field, an unknown field with nothing in it, a
verified account, and a marketing preference beside another user's profile. Each is
driven through the signed webhook with the payload of
tests/inbound/payloads/deliveries/real_deliveries.json (its `_source` names where each
comes from), delivered twice where it records something."""

import copy
import json
from pathlib import Path

import pytest

from contacts.models import Contact
from sending.models import Chat, ChatType, UnhandledWebhookItem
from tests.channel import set_channel, stored_channel
from tests.factories import ContactFactory
from tests.inbound.conftest import APP_SECRET, deliver

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).parent / "payloads"


def real(name: str) -> dict:
    document = json.loads((PAYLOADS / "deliveries" / "real_deliveries.json").read_text())
    assert document["_source"]
    return copy.deepcopy(document["payloads"][name])


def conversation(name: str) -> dict:
    file, _, key = name.partition(":")
    document = json.loads((PAYLOADS / "conversation" / f"{file}.json").read_text())
    return copy.deepcopy(document["payloads"][key])


def processed(response) -> dict:
    assert response.status_code == 200, response.content
    return response.json()["processed"]


def value_of(webhook: dict) -> dict:
    return webhook["entry"][0]["changes"][0]["value"]


@pytest.fixture
def history_org(org_a):
    set_channel(org_a, app_secret=APP_SECRET, phone_number_id="106540352242922")
    return org_a


# History: the media of an imported message, delivered later --------------------------


# Meta's examples: the message whose media a later webhook brings (its `media_placeholder`).
PLACEHOLDER = "wamid.QyNUEHBgLMTY0NjcwNDM1OTUVAgARGBI1Rj3NEYxMzAzMzQ5MkEA"


def test_a_later_history_media_webhook_fills_the_imported_chat(history_org):
    deliver(history_org, real("history_with_media_placeholder"))
    chat = Chat.objects.get(wam_id=PLACEHOLDER)
    assert chat.media is None and chat.contact.phone == "16505551234"

    counts = processed(deliver(history_org, real("history_media_later")))

    chat.refresh_from_db()
    assert chat.media is not None and chat.media.media_id == "24230790383178626"
    assert chat.metadata["type"] == "image"
    assert counts["skipped"] == 0 and counts["duplicates"] == 1
    # Delivered again: nothing changes.
    processed(deliver(history_org, real("history_media_later")))
    assert Chat.objects.filter(wam_id=PLACEHOLDER).count() == 1


def test_later_history_media_of_a_message_not_seen_yet_imports_it(history_org):
    counts = processed(deliver(history_org, real("history_media_later")))
    chat = Chat.objects.get(wam_id=PLACEHOLDER)
    assert counts["imported"] == 1
    assert chat.type == ChatType.INBOUND and chat.contact.phone == "16505551234"
    assert chat.media is not None and chat.media.media_id == "24230790383178626"


def test_later_history_media_without_a_usable_number_is_skipped(history_org):
    webhook = real("history_media_later")
    value_of(webhook)["messages"][0]["from"] = "not a number"
    counts = processed(deliver(history_org, webhook))
    assert counts["skipped"] == 1 and not Chat.objects.exists()


# Items nobody handles reach the staff's log -------------------------------------------


def test_calls_in_a_calls_change_are_logged_unhandled(org_a):
    set_channel(org_a, app_secret=APP_SECRET, phone_number_id="743897493242")
    counts = processed(deliver(org_a, real("calls_change")))
    assert counts["skipped"] == 1
    item = UnhandledWebhookItem.objects.get()
    assert item.field == "calls" and item.last_payload["calls"][0]["event"] == "connect"


def test_calls_inside_a_messages_change_are_logged_unhandled(org_a):
    set_channel(org_a, app_secret=APP_SECRET, phone_number_id="37489742")
    counts = processed(deliver(org_a, real("calls_in_messages")))
    assert counts["skipped"] == 1 and counts["messages"] == 0
    item = UnhandledWebhookItem.objects.get()
    assert (item.field, item.count) == ("calls", 1)
    assert item.last_payload["calls"][0]["event"] == "terminate"
    assert not Chat.objects.exists()


def test_a_change_without_a_field_is_logged_unhandled(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    counts = processed(deliver(org_a, real("partner_app_installed")))
    assert counts["skipped"] == 1
    item = UnhandledWebhookItem.objects.get()
    assert item.field == "(no field)"
    assert item.last_payload["event"] == "PARTNER_APP_INSTALLED"


def test_an_unknown_field_with_an_empty_value_is_logged_unhandled(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    counts = processed(deliver(org_a, real("empty_unknown_field")))
    assert counts["skipped"] == 1
    item = UnhandledWebhookItem.objects.get()
    assert (item.field, item.last_payload) == ("smb_app_state_sync", {})


def test_a_known_field_with_an_empty_value_is_skipped_unlogged(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    webhook = real("empty_unknown_field")
    webhook["entry"][0]["changes"][0]["field"] = "account_update"
    assert processed(deliver(org_a, webhook))["skipped"] == 1
    assert not UnhandledWebhookItem.objects.exists()


# A verified account ------------------------------------------------------------------


def test_verified_account_is_recorded_and_lifts_no_restriction(org_a):
    restrictions = [{"restriction_type": "RESTRICTED_ADD_PHONE_NUMBER_ACTION"}]
    set_channel(
        org_a,
        app_secret=APP_SECRET,
        kind="cloud_api",
        business_account_id="495709166956424",
        display_phone_number="124545784358810",
        account_status="RESTRICTED",
        restrictions=restrictions,
    )
    counts = processed(deliver(org_a, real("verified_account")))
    number = stored_channel(org_a)
    assert counts["updates"] == 1
    assert number.account_status == "RESTRICTED" and number.restrictions == restrictions
    [verified] = number.alerts
    assert verified["alert_type"] == "VERIFIED_ACCOUNT"
    assert verified["entity_id"] == "124545784358810"
    # Delivered again: recorded once.
    assert processed(deliver(org_a, real("verified_account")))["duplicates"] == 1
    assert len(stored_channel(org_a).alerts) == 1


# A marketing preference applies to its own user ----------------------------------------


def test_a_preference_applies_to_its_own_wa_id_not_the_profile_beside_it(history_org):
    webhook = conversation("user_preferences:stop")
    value = value_of(webhook)
    # The lone contacts[] entry is another user's, with a user id (BSUID) of its own.
    other = ContactFactory(organization=history_org, phone="14155550000", user_id="US.1")
    value["contacts"] = [{"wa_id": "14155550000", "user_id": "US.1"}]
    counts = processed(deliver(history_org, webhook))
    assert counts["preferences"] == 1
    other.refresh_from_db()
    assert other.opted_out is False
    named = Contact.objects.get(organization=history_org, phone="16505551234")
    assert named.opted_out is True and named.user_id == ""


def test_a_preference_naming_nobody_is_skipped_not_given_to_the_profile(history_org):
    # pywa's user_preferences fixture: an item without wa_id beside one contacts[] entry.
    webhook = conversation("user_preferences:unknown_category")
    item = value_of(webhook)["user_preferences"][0]
    item.update(category="marketing_messages", value="stop")
    profile = ContactFactory(organization=history_org, phone="16505551234")
    counts = processed(deliver(history_org, webhook))
    assert counts["skipped"] == 1 and "preferences" not in counts
    profile.refresh_from_db()
    assert profile.opted_out is False
