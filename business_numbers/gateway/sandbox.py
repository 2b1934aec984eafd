"""The sandbox channel: accepts every message locally, like Django's locmem mail backend.

It answers exactly as the Cloud API does (`wamid.` ids, `contacts[{input, wa_id}]`,
`message_status` for templates), so the rest of the service cannot tell the
difference. What it "sent" is kept in `outbox`, newest last, for tests and the admin.

Inbound media of a sandbox organization (`simulate_inbound --media FILE`) is "on the
channel" as a file in Django's storage under `SANDBOX_MEDIA_DIR`; `media_info` and
`download_media` serve it from there as Graph serves a customer's photo.
"""

import base64
import hashlib
import secrets
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from business_numbers.gateway.base import FailureKind, GatewayError, MediaTooLarge
from business_numbers.models import MessageTemplate, NumberKind

# Bounded, so that a long-running development server does not grow without end.
OUTBOX_SIZE = 1000
SANDBOX_MEDIA_DIR = "sandbox-media"
SANDBOX_URL = "sandbox:"


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


def new_media_id() -> str:
    """Shaped like WhatsApp's media ids: 15 to 16 digits."""
    return str(10**15 + secrets.randbelow(9 * 10**15))


def put_media(media_id: str, content) -> str:
    """Keep a file (a django File) as the sandbox channel's media `media_id`; its
    sha256, as the webhook carries it."""
    digest = hashlib.sha256()
    for chunk in content.chunks():
        digest.update(chunk)
    content.seek(0)
    default_storage.delete(media_name(media_id))
    default_storage.save(media_name(media_id), content)
    return digest.hexdigest()


def media_name(media_id: str) -> str:
    return f"{SANDBOX_MEDIA_DIR}/{media_id}"


def not_found(media_id: str) -> GatewayError:
    return GatewayError(
        FailureKind.REFUSED,
        f"The sandbox channel has no media {media_id}.",
        code=100,
        type="GraphMethodException",
        http_status=404,
    )


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


def written_templates(organization_id: int | None) -> list[dict[str, Any]]:
    """The templates written for the organization's sandbox numbers, as Graph lists them:
    a sync keeps them, as WhatsApp keeps the ones written for it."""
    rows = MessageTemplate.objects.live().filter(
        organization_id=organization_id, number__kind=NumberKind.SANDBOX
    )
    return [
        {
            "id": row.external_id,
            "name": row.name,
            "language": row.language,
            "status": row.status,
            "category": row.category,
            "components": row.components,
        }
        for row in rows
        if row.external_id and row.name != HELLO_WORLD["name"]
    ]


@dataclass(frozen=True)
class SandboxGateway:
    organization_id: int | None = None

    def send_message(
        self, payload: dict[str, Any], *, on_written: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        if on_written is not None:
            on_written()
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

    def upload_media(self, content: bytes, *, mime_type: str, file_name: str) -> str:
        """Kept as the sandbox's media, as a customer's file is: the message sent by its
        id can be looked up and downloaded like any other."""
        media_id = new_media_id()
        put_media(media_id, ContentFile(content, name=file_name))
        return media_id

    def list_templates(self) -> list[dict[str, Any]]:
        return [HELLO_WORLD, *written_templates(self.organization_id)]

    # Templates written for the sandbox are approved at once (docs/templates.md).

    def create_template(self, template: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": new_media_id(),  # WhatsApp's template ids are digits, as its media ids
            "status": "APPROVED",
            "category": str(template.get("category") or ""),
        }

    def edit_template(self, template_id: str, changes: dict[str, Any]) -> str:
        return "APPROVED"

    def delete_template(self, name: str, template_id: str = "") -> None:
        return None

    def media_info(self, media_id: str) -> dict[str, Any]:
        name = media_name(media_id)
        if "/" in media_id or not default_storage.exists(name):
            raise not_found(media_id)
        # The webhook carried the type and checksum; the channel adds only the size.
        return {
            "url": SANDBOX_URL + media_id,
            "mime_type": "",
            "sha256": "",
            "file_size": default_storage.size(name),
        }

    def download_media(self, url: str, *, max_bytes: int, chunk_size: int) -> Iterator[bytes]:
        media_id = url.removeprefix(SANDBOX_URL)
        if not url.startswith(SANDBOX_URL) or "/" in media_id:
            raise not_found(media_id)
        try:
            stored = default_storage.open(media_name(media_id), "rb")
        except FileNotFoundError:
            raise not_found(media_id) from None
        received = 0
        with stored:
            for chunk in stored.chunks(chunk_size):
                received += len(chunk)
                if received > max_bytes:
                    raise MediaTooLarge(f"more than {max_bytes} bytes")
                yield chunk
