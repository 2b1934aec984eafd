"""The sandbox channel: sends nothing, and behaves like WhatsApp, as Django's locmem mail
backend behaves like a mail server.

It answers exactly as the Cloud API does (`wamid.` ids, `contacts[{input, wa_id}]`,
`message_status` for templates), so the rest of the service cannot tell the
difference. What it "sent" is kept in `outbox`, newest last, for tests and the admin.

It knows the templates WhatsApp would: `hello_world` (every new business account has
it) and every APPROVED template of the number (those written through /api/templates,
which the sandbox approves at once, and those synced). A template it does not know is
refused as WhatsApp refuses it: Graph's error 132001, "Template name does not exist in
the translation". What it accepted then moves to `sent`, `delivered` and `read` through
WhatsApp's own status webhooks, which `status_webhook` writes and the inbound app plays
(inbound/sandbox.py, after SANDBOX_STATUS_DELAYS).

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

from business_numbers.gateway.base import FailureKind, GatewayError, MediaTooLarge, NotWritten
from business_numbers.models import MessageTemplate, Number

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


HELLO_WORLD_KEY: tuple[str, str] = ("hello_world", "en_US")  # HELLO_WORLD's name, language
APPROVED = "APPROVED"


def approved_templates(number_id: int | None) -> frozenset[tuple[str, str]]:
    """The (name, language) of every template the sandbox number may send."""
    if number_id is None:
        return frozenset({HELLO_WORLD_KEY})
    approved = MessageTemplate.objects.live().filter(number_id=number_id, status=APPROVED)
    return frozenset({HELLO_WORLD_KEY, *approved.values_list("name", "language")})


def unknown_template(name: str, language: str) -> GatewayError:
    """Graph's own refusal of a template the number does not have in that language (its
    HTTP status, code, type, message and `error_data.details`)."""
    return GatewayError(
        FailureKind.REFUSED,
        "(#132001) Template name does not exist in the translation",
        code=132001,
        type="OAuthException",
        details=f"template name ({name}) does not exist in {language}",
        fbtrace_id="sandbox",
        http_status=404,
    )


@dataclass(frozen=True)
class SandboxGateway:
    organization_id: int | None = None
    number_id: int | None = None
    # What approved_templates() gave when the gateway was made (gateway_for).
    templates: frozenset[tuple[str, str]] = frozenset({HELLO_WORLD_KEY})

    def send_message(
        self, payload: dict[str, Any], *, may_write: Callable[[], bool] | None = None
    ) -> dict[str, Any]:
        if payload.get("type") == "template":
            template = payload.get("template") or {}
            name = str(template.get("name", ""))
            language = str((template.get("language") or {}).get("code", ""))
            if (name, language) not in self.templates:
                raise unknown_template(name, language)
        if may_write is not None and not may_write():
            raise NotWritten
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
        """hello_world and the number's own templates, as Graph lists them: a sync keeps
        what was written here."""
        if self.number_id is None:
            return [HELLO_WORLD]
        templates = MessageTemplate.objects.live().filter(number_id=self.number_id)
        return [HELLO_WORLD] + [
            {
                "id": template.external_id,
                "name": template.name,
                "language": template.language,
                "status": template.status,
                "category": template.category,
                "components": template.components,
            }
            for template in templates.order_by("name", "language")
            if (template.name, template.language) != HELLO_WORLD_KEY
        ]

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


# What the sandbox's messages go through after they are accepted, in WhatsApp's order.
STATUS_STEPS = ("sent", "delivered", "read")


def status_webhook(
    number: Number, *, status: str, timestamp: int, recipients: dict[str, str]
) -> dict[str, Any]:
    """WhatsApp's status webhook for some of the number's messages (`recipients`: each
    message id and the wa_id or user id it went to), as Meta posts it."""
    metadata = {"display_phone_number": number.display_phone_number or "sandbox"}
    if number.phone_number_id:  # else the organization's numbers have none to route by
        metadata["phone_number_id"] = number.phone_number_id
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": number.business_account_id or "sandbox",
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": metadata,
                            "statuses": [
                                {
                                    "id": wam_id,
                                    "status": status,
                                    "timestamp": str(timestamp),
                                    "recipient_id": recipient,
                                }
                                for wam_id, recipient in recipients.items()
                            ],
                        },
                    }
                ],
            }
        ],
    }
