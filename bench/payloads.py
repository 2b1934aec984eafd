"""The WhatsApp webhook deliveries the scenarios send, signed with the bench's app secret
(an inbound text that matches the auto-reply, status updates, inbound media), and the
organization on the Cloud API that receives them."""

import hashlib
import hmac
import json
import time
import uuid

APP_SECRET = "bench-app-secret"
ACCESS_TOKEN = "bench-token"
PHONE_NUMBER_ID = "100000000000001"
TRIGGER, ANSWER = "hello", "Hello from the bench"

# Run by `manage.py shell`: an organization on the Cloud API (the stand-in) with an API
# token and a canned reply to TRIGGER; prints {"uuid", "token"}.
CLOUD_API_SEED = f"""
import json
from accounts.services import create_organization, issue_token
from canned_replies.services import create_canned_reply
from business_numbers.services import configure_channel
org = create_organization(name="Bench Cloud API")
configure_channel(organization=org, phone_number_id="{PHONE_NUMBER_ID}",
                  access_token="{ACCESS_TOKEN}", app_secret="{APP_SECRET}")
create_canned_reply(organization=org, name="greeting", trigger="{TRIGGER}",
                    match_criteria="contains", response="{ANSWER}")
token = issue_token(organization=org, name="bench").token
print(json.dumps({{"uuid": str(org.uuid), "token": token}}))
"""


def signature(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def delivery(value: dict) -> bytes:
    """One webhook delivery of one change to the bench's number."""
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550000000", "phone_number_id": PHONE_NUMBER_ID},
        **value,
    }
    entry = {"id": "100000000000000", "changes": [{"field": "messages", "value": value}]}
    return json.dumps({"object": "whatsapp_business_account", "entry": [entry]}).encode()


def inbound(phone: str, message: dict) -> bytes:
    """One message from `phone`, with a message id of its own."""
    message = {
        "from": phone,
        "id": f"wamid.in.{uuid.uuid4().hex}",
        "timestamp": str(int(time.time())),
        **message,
    }
    sender = {"profile": {"name": "Bench"}, "wa_id": phone}
    return delivery({"contacts": [sender], "messages": [message]})


def message_body(phone: str, text: str = TRIGGER) -> bytes:
    """A text from `phone` that matches the auto-reply's trigger."""
    return inbound(phone, {"type": "text", "text": {"body": f"{text} there"}})


def media_body(phone: str, kind: str, media_id: str, mime_type: str) -> bytes:
    return inbound(phone, {"type": kind, kind: {"mime_type": mime_type, "id": media_id}})


def signed_messages(count: int, phone_base: int) -> list[tuple[str, bytes]]:
    """`count` signed texts from distinct senders (for wrk's BENCH_SIGNED_FILE)."""
    bodies = [message_body(str(phone_base + n)) for n in range(count)]
    return [(signature(body), body) for body in bodies]


def status_body(chats: int, first: int = 1) -> bytes:
    """One delivery of `chats` status updates, for the seeded chats wamid.bench.N."""
    now = str(int(time.time()))
    statuses = [
        {
            "id": f"wamid.bench.{n}",
            "status": "delivered",
            "timestamp": now,
            "recipient_id": "447000000001",
        }
        for n in range(first, first + chats)
    ]
    return delivery({"statuses": statuses})


def status_update(
    wam_id: str, status: str, recipient: str, *, timestamp: int, callback_data: str = ""
) -> bytes:
    """One status of one message, as WhatsApp posts each: the shape of the captured
    deliveries of tests/inbound/payloads/conversation/statuses.json (a conversation and a
    billable pricing on each; the expiration only on `sent`), and the send's
    biz_opaque_callback_data when it carried one."""
    conversation: dict = {"id": f"conversation-{recipient}", "origin": {"type": "marketing"}}
    if status == "sent":
        conversation["expiration_timestamp"] = str(timestamp + 86_400)
    item = {
        "id": wam_id,
        "status": status,
        "timestamp": str(timestamp),
        "recipient_id": recipient,
        "conversation": conversation,
        "pricing": {"billable": True, "pricing_model": "CBP", "category": "marketing"},
    }
    if callback_data:
        item["biz_opaque_callback_data"] = callback_data
    return delivery({"statuses": [item]})
