"""Endpoints in the `swiftchats` format get the original product's bodies
(docs/events.md), still signed; each compared, field by field, with the original's documented example
(payloads/swiftchats_examples.json, its source named there)."""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from standardwebhooks import Webhook

from devtools.loopback import HOST
from events import services
from events.models import Emission, Event, Format
from sending.models import Chat
from tests.channel import set_channel
from tests.events.conftest import deliveries, run_all, verified
from tests.inbound.conftest import APP_SECRET, deliver, envelope, status, statuses, text_message
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db

EXAMPLES = json.loads((Path(__file__).parent / "payloads" / "swiftchats_examples.json").read_text())
# What the original's contact has and ours has not: columns of features it has and this
# service has not (AI assistance, the chat list's ordering, custom fields).
ORIGINAL_ONLY_CONTACT_KEYS = {"latest_chat_created_at", "ai_assistance_enabled", "metadata"}


@pytest.fixture
def webhook_org(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    return org_a


@pytest.fixture
def original(org_a):
    """A `swiftchats` endpoint of organization A that wants every event (not posted to)."""
    return services.create_endpoint(
        organization=org_a, url="https://example.com/original", format=Format.SWIFTCHATS
    )


def bodies(**filters) -> list[dict]:
    return [json.loads(d.body) for d in deliveries(**filters)]


def original_bodies(endpoint) -> list[dict]:
    return bodies(endpoint=endpoint)


def status_bodies(endpoint) -> list[dict]:
    """The statuses passed on (a chat made for a test also opens its conversation:
    conversation.created)."""
    return [b for b in bodies(endpoint=endpoint) if b["event"] == "message.status.update"]


def same_shape(ours, theirs, path="data", *, missing=frozenset()):
    """Every key of the original's example is in ours (but `missing`) with a value of the
    same JSON type; nested objects compared the same way."""
    assert isinstance(ours, type(theirs)) or theirs is None or ours is None, path
    if isinstance(theirs, dict):
        absent = set(theirs) - set(ours) - set(missing)
        assert not absent, f"{path}: the original has {sorted(absent)}"
        for key, value in theirs.items():
            if key in ours:
                same_shape(ours[key], value, f"{path}.{key}", missing=missing)
    elif isinstance(theirs, list) and theirs and ours:
        same_shape(ours[0], theirs[0], f"{path}[0]", missing=missing)


class OriginalStyleReceiver:
    """A receiver written the way the original product's clients are: a plain HTTP server
    that reads `payload.get("event")` and `data.data.value.messages[0]` and nothing else
    of ours, and checks the Standard Webhooks signature."""

    def __init__(self):
        self.texts: list[str] = []
        self.statuses: list[tuple[str, str]] = []
        self.events: list[str] = []
        self.secret: str | None = None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["content-length"]))
                if receiver.secret:
                    Webhook(receiver.secret).verify(body, dict(self.headers))
                payload = json.loads(body)
                event = payload.get("event")
                receiver.events.append(event)
                data = payload.get("data", {})
                if event == "message.received":
                    message = data["data"]["value"]["messages"][0]
                    if message["type"] == "text":
                        receiver.texts.append(message["text"]["body"])
                elif event == "message.status.update":
                    item = data["data"]["value"]["statuses"][0]
                    receiver.statuses.append((item["id"], item["status"]))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://{HOST}:{self.server.server_address[1]}/whatsapp"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_a_receiver_written_for_the_original_reads_the_message_and_its_status(webhook_org):
    with OriginalStyleReceiver() as receiver:
        endpoint = services.create_endpoint(
            organization=webhook_org, url=receiver.url, format=Format.SWIFTCHATS
        )
        receiver.secret = endpoint.secret
        deliver(webhook_org, envelope(text_message("Hello there", wam_id="wamid.IN1")))
        ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")
        deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 100))))
        run_all()
    assert receiver.texts == ["Hello there"]
    assert receiver.statuses == [("wamid.OUT1", "delivered")]
    assert sorted(receiver.events) == [
        "contact.created",
        "conversation.created",  # the customer's, and the chat made for the status
        "conversation.created",
        "message.received",
        "message.status.update",
    ]


def test_message_received_is_the_whatsapp_change(webhook_org, receiver):
    signed = services.create_endpoint(
        organization=webhook_org, url=receiver.url, format=Format.SWIFTCHATS
    )
    example = EXAMPLES["message.received"]["data"]
    change = example["value"]
    deliver(webhook_org, envelope(change))
    run_all()
    [body] = [verified(signed, r) for r in receiver.requests if b"message.received" in r.body]
    assert set(body) == {"event", "data"}
    assert body["event"] == "message.received"
    assert body["data"] == {"data": {"value": change, "field": "messages"}}
    same_shape(body["data"]["data"], example)


def test_one_body_per_message_holding_that_message(webhook_org, original):
    change = text_message("one", wam_id="wamid.IN1")
    second = dict(change["messages"][0], id="wamid.IN2", text={"body": "two"})
    change["messages"].append(second)
    deliver(webhook_org, envelope(change))
    received = [b for b in original_bodies(original) if b["event"] == "message.received"]
    assert [b["data"]["data"]["value"]["messages"] for b in received] == [
        [change["messages"][0]],
        [second],
    ]
    assert all(b["data"]["data"]["value"]["contacts"] == change["contacts"] for b in received)


def test_message_status_update_is_the_whatsapp_change(webhook_org, original):
    ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")
    example = EXAMPLES["message.status.update"]["data"]
    item = dict(example["value"]["statuses"][0], id="wamid.OUT1")
    value = {**example["value"], "statuses": [item]}
    deliver(webhook_org, envelope(value))
    [body] = [b for b in original_bodies(original) if b["event"] == "message.status.update"]
    assert body["data"]["data"] == {"value": value, "field": "messages"}
    same_shape(body["data"]["data"], example)


def test_one_status_body_per_status_whatsapp_sent(webhook_org, original):
    """The original passes on every status webhook (its WebhookController.php): each new
    status is a body, whether it moved its chat or not."""
    ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")
    ChatFactory(organization=webhook_org, wam_id="wamid.OUT2")
    delivery = envelope(
        statuses(
            status("wamid.OUT1", "sent", 100),
            status("wamid.OUT1", "delivered", 101),
            status("wamid.OUT2", "sent", 100),
        )
    )
    deliver(webhook_org, delivery)
    found = [
        (item["id"], item["status"])
        for b in original_bodies(original)
        if b["event"] == "message.status.update"
        for item in b["data"]["data"]["value"]["statuses"]
    ]
    assert found == [("wamid.OUT1", "sent"), ("wamid.OUT1", "delivered"), ("wamid.OUT2", "sent")]
    deliver(webhook_org, delivery)  # WhatsApp delivering again: nothing passed on twice
    assert len(status_bodies(original)) == 3


def test_a_status_for_a_message_sent_before_the_cutover_is_passed_on(webhook_org, original):
    """A business moving from the original: statuses of messages the original sent still
    reach its receivers, though this service has no chat for them."""
    item = status("wamid.SENT-BY-THE-ORIGINAL", "read", 100)
    deliver(webhook_org, envelope(statuses(item)))
    [body] = original_bodies(original)
    assert body["event"] == "message.status.update"
    assert body["data"]["data"]["value"]["statuses"] == [item]


def test_a_status_that_moves_no_chat_is_passed_on(webhook_org, original):
    standard = services.create_endpoint(organization=webhook_org, url="https://example.com/new")
    ChatFactory(organization=webhook_org, wam_id="wamid.OUT1", status="read")
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "warning", 100))))
    [body] = status_bodies(original)
    assert body["data"]["data"]["value"]["statuses"][0]["status"] == "warning"
    # Our own format: only a chat that moved (the test's chat opened its conversation).
    assert [b["type"] for b in bodies(endpoint=standard)] == ["conversation.created"]


def test_a_status_that_came_before_its_send_is_passed_on_once(webhook_org, original):
    """Meta may post `sent` before the send has recorded its chat: the status is passed
    on as it came, and not again when the chat is recorded and takes it."""
    from sending.services.statuses import apply_kept_statuses

    item = status("wamid.EARLY", "sent", 100)
    deliver(webhook_org, envelope(statuses(item)))
    chat = ChatFactory(organization=webhook_org, wam_id="wamid.EARLY")
    apply_kept_statuses(chat)
    [body] = [b for b in original_bodies(original) if b["event"] == "message.status.update"]
    assert body["data"]["data"]["value"]["statuses"] == [item]


def test_message_sent_is_the_send_response(api, org_a, original):
    response = api.post("/api/send", {"phone": "+14155552671", "message": "Hi"}, format="json")
    assert response.status_code == 200
    [body] = [b for b in original_bodies(original) if b["event"] == "message.sent"]
    answer = response.json()["data"]
    sent = body["data"]["data"]
    chat = Chat.objects.get(type="outbound")
    assert sent["success"] is True
    assert sent["data"]["chat"] == answer["data"]["chat"]
    assert sent["data"]["messages"] == [{"id": chat.wam_id, "message_status": "accepted"}]
    assert sent["data"]["contacts"] == [{"input": "+14155552671", "wa_id": "14155552671"}]
    same_shape(
        body["data"],
        EXAMPLES["message.sent"]["data"],
        missing=ORIGINAL_ONLY_CONTACT_KEYS,
    )


def test_a_refused_send_is_message_sent_with_success_false(api, cloud_org, graph):
    """As the original's WhatsappService posts it (app/Services/WhatsappService.php): the
    send's answer object, `success: false`, Graph's error body under `data` and its text
    under `message`. Our own format has no message.sent for it."""
    original = services.create_endpoint(
        organization=cloud_org, url="https://example.com/original", format=Format.SWIFTCHATS
    )
    standard = services.create_endpoint(organization=cloud_org, url="https://example.com/new")
    graph.reply(
        400,
        {
            "error": {
                "message": "(#131026) Message undeliverable",
                "type": "OAuthException",
                "code": 131026,
                "error_data": {
                    "messaging_product": "whatsapp",
                    "details": "Message Undeliverable.",
                },
                "fbtrace_id": "Az8or2yhqkZfEZ-_4Qn_Bam",
            }
        },
    )
    response = api.post("/api/send", {"phone": "+14155552671", "message": "Hi"}, format="json")
    assert response.status_code == 422
    [body] = [b for b in original_bodies(original) if b["event"] == "message.sent"]
    assert body == {
        "event": "message.sent",
        "data": {
            "data": {
                "success": False,
                "data": {
                    "error": {
                        "message": "(#131026) Message undeliverable",
                        "type": "OAuthException",
                        "code": 131026,
                        "error_data": {
                            "messaging_product": "whatsapp",
                            "details": "Message Undeliverable.",
                        },
                        "fbtrace_id": "Az8or2yhqkZfEZ-_4Qn_Bam",
                    }
                },
                "message": "(#131026) Message undeliverable",
            }
        },
    }
    assert [b for b in bodies(endpoint=standard) if b["type"] == "message.sent"] == []


def test_contact_events_are_the_contact_record(api, org_a, original):
    contact = api.post(
        "/api/contacts", {"phone": "+14155552671", "first_name": "Ada"}, format="json"
    ).json()["id"]
    api.patch(f"/api/contacts/{contact}", {"last_name": "Lovelace"}, format="json")
    listed = api.get(f"/api/contacts/{contact}").json()["data"]
    api.delete(f"/api/contacts/{contact}")
    found = original_bodies(original)
    assert [b["event"] for b in found] == ["contact.created", "contact.updated", "contact.deleted"]
    assert found[1]["data"] == listed
    assert found[1]["data"]["formatted_phone_number"] == "+1 415-555-2671"
    for body in found[:2]:
        same_shape(
            body["data"], EXAMPLES[body["event"]]["data"], missing=ORIGINAL_ONLY_CONTACT_KEYS
        )
    # As the original's ContactService::delete posts it (app/Services/ContactService.php):
    # a list of {uuid, deleted_at}, the time in ISO 8601 with `Z` (Carbon's toISOString).
    [gone] = found[2]["data"]["list"]
    assert set(found[2]["data"]) == {"list"}
    assert set(gone) == {"uuid", "deleted_at"} and gone["uuid"] == contact
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", gone["deleted_at"])


def test_group_events(api, org_a, original):
    group = api.post("/api/contact-groups", {"name": "VIP"}, format="json").json()["id"]
    api.put(f"/api/contact-groups/{group}", {"name": "VIPs"}, format="json")
    listed = api.get(f"/api/contact-groups/{group}").json()["data"]
    api.delete(f"/api/contact-groups/{group}")
    found = original_bodies(original)
    assert [b["event"] for b in found] == ["group.created", "group.updated", "group.deleted"]
    assert found[1]["data"] == listed
    [gone] = found[2]["data"]["list"]
    assert set(gone) == {"uuid", "deleted_at"} and gone["uuid"] == group
    assert gone["deleted_at"].endswith("Z")
    same_shape(found[0]["data"], EXAMPLES["group.created"]["data"])
    same_shape(found[1]["data"], EXAMPLES["group.updated"]["data"])
    same_shape(gone, EXAMPLES["group.deleted"]["data"])


def test_autoreply_events(api, org_a, original):
    body = {
        "name": "Hours",
        "trigger": "hours",
        "match_criteria": "contains",
        "response_type": "text",
        "response": "9 to 5",
    }
    uuid = api.post("/api/canned-replies", body, format="json").json()["id"]
    api.patch(f"/api/canned-replies/{uuid}", {"response": "10 to 6"}, format="json")
    listed = api.get(f"/api/canned-replies/{uuid}").json()["data"]
    api.delete(f"/api/canned-replies/{uuid}")
    found = original_bodies(original)
    assert [b["event"] for b in found] == [
        "autoreply.created",
        "autoreply.updated",
        "autoreply.deleted",
    ]
    assert found[1]["data"] == listed
    assert json.loads(found[1]["data"]["metadata"]) == {"type": "text", "data": {"text": "10 to 6"}}
    # As the original's AutoReplyService::destroy posts it (app/Services/AutoReplyService.php):
    # `list` is one {uuid, deleted_at} object, not a list.
    gone = found[2]["data"]["list"]
    assert isinstance(gone, dict)
    assert gone["uuid"] == uuid and set(gone) == {"uuid", "deleted_at"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", gone["deleted_at"])
    same_shape(found[0]["data"], EXAMPLES["autoreply.created"]["data"])
    same_shape(found[1]["data"], EXAMPLES["autoreply.updated"]["data"])
    same_shape(gone, EXAMPLES["autoreply.deleted"]["data"]["list"])


def test_an_event_the_original_never_had_keeps_our_data(org_a, original):
    services.emit_event(organization_id=org_a.pk, event="channel.updated", data={"a": 1})
    assert original_bodies(original) == [{"event": "channel.updated", "data": {"a": 1}}]


def test_each_endpoint_gets_its_own_format(api, webhook_org, original):
    standard = services.create_endpoint(organization=webhook_org, url="https://example.com/new")
    deliver(webhook_org, envelope(text_message("Hi", wam_id="wamid.IN1")))
    ours = [b for b in bodies(endpoint=standard) if b["type"] == "message.received"]
    theirs = [b for b in original_bodies(original) if b["event"] == "message.received"]
    assert len(ours) == len(theirs) == 1
    chat = Chat.objects.get(wam_id="wamid.IN1")
    assert ours[0]["data"] == api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert theirs[0]["data"]["data"]["value"]["messages"][0]["id"] == "wamid.IN1"


def test_the_change_is_stored_only_for_a_swiftchats_endpoint(webhook_org):
    """The outbox holds one body per format some endpoint wants: no WhatsApp change for
    standard endpoints alone, no chat record for swiftchats endpoints alone."""
    endpoint = services.create_endpoint(organization=webhook_org, url="https://example.com/h")
    deliver(webhook_org, envelope(text_message("Hi", wam_id="wamid.IN1")))
    stored = Emission.objects.filter(event=Event.MESSAGE_RECEIVED).values_list("body", flat=True)
    assert [json.loads(b).get("type") for b in stored] == ["message.received"]
    Emission.objects.all().delete()
    services.update_endpoint(endpoint=endpoint, changes={"format": Format.SWIFTCHATS})
    deliver(webhook_org, envelope(text_message("Hi", wam_id="wamid.IN2")))
    stored = Emission.objects.filter(event=Event.MESSAGE_RECEIVED).values_list("body", flat=True)
    assert [set(json.loads(b)) for b in stored] == [{"event", "data"}]


def test_the_format_in_the_api(api, org_a):
    created = api.post(
        "/api/webhooks",
        {"url": "https://example.com/hook", "format": "swiftchats"},
        format="json",
    )
    assert created.status_code == 200
    uuid = created.json()["id"]
    assert api.get(f"/api/webhooks/{uuid}").json()["data"]["format"] == "swiftchats"
    assert api.get("/api/webhooks").json()["data"][0]["format"] == "swiftchats"
    bad = api.patch(f"/api/webhooks/{uuid}", {"format": "laravel"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["errors"]["format"] == [
        "Unknown format; the formats are: standard, swiftchats."
    ]
    edited = api.patch(f"/api/webhooks/{uuid}", {"format": "standard"}, format="json")
    assert edited.status_code == 200
    assert api.get(f"/api/webhooks/{uuid}").json()["data"]["format"] == "standard"
    default = api.post("/api/webhooks", {"url": "https://example.com/2"}, format="json")
    assert api.get(f"/api/webhooks/{default.json()['id']}").json()["data"]["format"] == "standard"
