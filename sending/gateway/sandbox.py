"""The sandbox channel: accepts every message locally, like Django's locmem mail backend.

It answers exactly as the Cloud API does (`wamid.` ids, `contacts[{input, wa_id}]`,
`message_status` for templates), so the rest of the service cannot tell the
difference. What it "sent" is kept in `outbox`, newest last, for tests and the admin.
"""

import base64
import secrets
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# Bounded, so that a long-running development server does not grow without end.
OUTBOX_SIZE = 1000


@dataclass(frozen=True)
class SandboxMessage:
    organization_id: int | None
    payload: dict[str, Any]
    answer: dict[str, Any]
    sent_at: datetime = field(default_factory=lambda: datetime.now(UTC))


outbox: deque[SandboxMessage] = deque(maxlen=OUTBOX_SIZE)
_lock = threading.Lock()


def clear_outbox() -> None:
    with _lock:
        outbox.clear()


def sent_messages(organization_id: int | None = None) -> list[SandboxMessage]:
    """A snapshot of the outbox, optionally for one organization."""
    with _lock:
        return [m for m in outbox if organization_id in (None, m.organization_id)]


def new_message_id(to: str) -> str:
    """Shaped like WhatsApp's ids: `wamid.` and base64 of the number and random bytes."""
    raw = b"\x18\x0c" + to.encode()[:20] + b"\x15\x02\x00\x11\x18\x12" + secrets.token_bytes(18)
    return "wamid." + base64.b64encode(raw).decode().rstrip("=")


# Meta gives every new business account this template; the sandbox has it too.
HELLO_WORLD = {
    "id": "1000000000000001",
    "name": "hello_world",
    "language": "en_US",
    "status": "APPROVED",
    "category": "UTILITY",
    "components": [
        {"type": "HEADER", "format": "TEXT", "text": "Hello World"},
        {
            "type": "BODY",
            "text": "Welcome and congratulations!! This message demonstrates your ability to "
            "send a WhatsApp message notification from the Cloud API, hosted by Meta. "
            "Thank you for taking the time to test with us.",
        },
        {"type": "FOOTER", "text": "WhatsApp Business Platform sample message"},
    ],
}


@dataclass(frozen=True)
class SandboxGateway:
    organization_id: int | None = None

    def send_message(self, payload: dict[str, Any]) -> dict[str, Any]:
        to = str(payload.get("to", ""))
        # A user known only by their business-scoped user id is answered with `user_id`.
        recipient = {"input": to, "wa_id": to}
        if not to and payload.get("recipient"):
            to = str(payload["recipient"])
            recipient = {"input": to, "user_id": to}
        message: dict[str, Any] = {"id": new_message_id(to)}
        if payload.get("type") == "template":
            message["message_status"] = "accepted"
        answer = {
            "messaging_product": "whatsapp",
            "contacts": [recipient],
            "messages": [message],
        }
        with _lock:
            outbox.append(SandboxMessage(self.organization_id, payload, answer))
        return answer

    def list_templates(self) -> list[dict[str, Any]]:
        return [HELLO_WORLD]
