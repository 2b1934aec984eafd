"""Real webhook payloads (tests/inbound/payloads, each file naming its source) replayed
against the webhook: every inbound message becomes a chat, every status reaches its chat,
and nothing that is ours is skipped."""

import json
from pathlib import Path

import pytest

from contacts.models import Contact
from sending.models import Chat, ChatStatus, ChatType
from tests.channel import set_channel
from tests.factories import ContactFactory, create_chat
from tests.inbound.conftest import APP_SECRET, deliver

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).parent / "payloads"


def corpus(carrying: str | None = None) -> list:
    """Every payload, or those whose changes carry `messages` (or `statuses`)."""
    cases = []
    for path in sorted(PAYLOADS.glob("*.json")):
        document = json.loads(path.read_text())
        assert document["_source"], f"{path.name} does not say where its payloads come from"
        for name, payload in document["payloads"].items():
            if carrying is None or any(value.get(carrying) for value in values(payload)):
                cases.append(pytest.param(payload, id=f"{path.stem}:{name}"))
    return cases


def values(payload: dict) -> list[dict]:
    return [change["value"] for entry in payload["entry"] for change in entry["changes"]]


def messages(payload: dict) -> list[dict]:
    return [message for value in values(payload) for message in value.get("messages", [])]


def statuses(payload: dict) -> list[dict]:
    return [status for value in values(payload) for status in value.get("statuses", [])]


def receiving_org(org, payload):
    """The organization whose number the payload was sent to."""
    set_channel(
        org,
        app_secret=APP_SECRET,
        phone_number_id=values(payload)[0]["metadata"]["phone_number_id"],
    )
    return org


def test_the_corpus_has_every_kind_of_payload():
    kinds = set()
    for param in corpus():
        payload = param.values[0]
        for message in messages(payload):
            kinds.add(message["type"])
            if message["type"] == "interactive" and "interactive" in message:
                kinds.add(message["interactive"]["type"])
            if message["type"] == "system":
                kinds.add(message["system"]["type"])
            if "from" not in message:
                kinds.add("no phone number")
        kinds.update(f"status {status['status']}" for status in statuses(payload))
        if sum(len(entry["changes"]) for entry in payload["entry"]) > 1:
            kinds.add("multiple changes")
    expected = {
        "text", "image", "video", "audio", "document", "sticker", "location", "contacts",
        "reaction", "order", "button", "interactive", "list_reply", "nfm_reply",
        "unsupported", "edit", "revoke", "system", "user_changed_number",
        "user_changed_user_id", "customer_identity_changed", "no phone number",
        "status sent", "status delivered", "status read", "status played", "status failed",
        "multiple changes",
    }  # fmt: skip
    assert expected <= kinds


@pytest.mark.parametrize("payload", corpus("messages"))
def test_every_real_message_becomes_a_chat(org_a, payload):
    org = receiving_org(org_a, payload)
    for message in messages(payload):
        if message["type"] == "system" and "user_id" in message["system"]:
            ContactFactory(
                organization=org, phone="", user_id=message["system"]["previous_user_id"]
            )
    response = deliver(org, payload)
    assert response.status_code == 200
    processed = response.json()["processed"]
    assert processed["skipped"] == 0, processed
    for message in messages(payload):
        chat = Chat.objects.get(organization=org, wam_id=message["id"])
        assert chat.type == ChatType.INBOUND
        assert chat.metadata["type"] == message["type"]
        for kept in ("context", "referral", "errors"):
            if kept in message:
                assert chat.metadata[kept] == message[kept]


@pytest.mark.parametrize("payload", corpus("statuses"))
def test_every_real_status_reaches_its_chat(org_a, payload):
    org = receiving_org(org_a, payload)
    contact = ContactFactory(organization=org, phone="972987654321")
    for status in statuses(payload):
        create_chat(
            organization=org,
            contact=contact,
            wam_id=status["id"],
            type=ChatType.OUTBOUND,
            status=ChatStatus.ACCEPTED,
        )
    processed = deliver(org, payload).json()["processed"]
    assert processed["skipped"] == 0, processed
    for status in statuses(payload):
        chat = Chat.objects.get(organization=org, wam_id=status["id"])
        assert chat.status == status["status"]
        assert chat.status_events.get().status == status["status"]
        if status.get("errors"):
            assert chat.error_code == status["errors"][0]["code"]


def test_a_real_delivery_for_another_number_is_not_recorded(org_a):
    payload = json.loads((PAYLOADS / "pywa_messages.json").read_text())["payloads"]["text"]
    set_channel(org_a, app_secret=APP_SECRET, phone_number_id="999999999999")
    processed = deliver(org_a, payload).json()["processed"]
    assert processed["other_number"] == 1
    assert not Chat.objects.exists() and not Contact.objects.exists()
