"""Chats and templates as the API shows them (api.md's shapes), for the API, the events
and the admin alike."""

from typing import Any

from contacts.representations import contact_data
from messaging_project.core.formats import iso_datetime, json_text, laravel_datetime
from sending.models import Channel, ChannelKind, Chat, ChatStatus, MessageTemplate, QualityRating

# PostgreSQL's jsonb does not keep key order, so the metadata string is written in one
# fixed order: these keys first, as api.md shows them, then any others alphabetically.
KEY_ORDER = [
    "type",
    "sub_type",
    "index",
    "name",
    "language",
    "code",
    "template",
    "text",
    "header",
    "body",
    "footer",
    "components",
    "parameters",
    "buttons",
    "value",
]
KEY_RANK = {key: rank for rank, key in enumerate(KEY_ORDER)}


def canonical(value: Any) -> Any:
    """`value` with every object's keys in that order. Copies with its own stack, not by
    recursion: metadata that older code stored unchecked may nest hundreds deep."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, slot = stack.pop()
        if isinstance(item, dict):
            keys = sorted(item, key=lambda key: (KEY_RANK.get(key, len(KEY_ORDER)), key))
            copied: Any = dict.fromkeys(keys)  # the order is set here, the values below
            stack.extend((item[key], copied, key) for key in keys)
        elif isinstance(item, list):
            copied = [None] * len(item)
            stack.extend((child, copied, index) for index, child in enumerate(item))
        else:
            copied = item
        parent[slot] = copied
    return root[0]


def chat_data(chat: Chat, *, with_contact: bool = True) -> dict[str, Any]:
    """The chat record of api.md. The template send response leaves out the contact
    and the deletion fields, as the reference example does."""
    data: dict[str, Any] = {
        "id": chat.id,
        "uuid": str(chat.uuid),
        "organization_id": chat.organization_id,
        "wam_id": chat.wam_id,
        "contact_id": chat.contact_id,
        "type": chat.type,
        "metadata": json_text(canonical(chat.metadata)),
        "media_id": chat.media_id,
        "status": chat.status,
        "source": chat.source,
    }
    if with_contact:
        data["deleted_by"] = chat.deleted_by
        data["deleted_at"] = laravel_datetime(chat.deleted_at)
    data["created_at"] = laravel_datetime(chat.created_at)
    data["sent_at"] = iso_datetime(chat.sent_at)  # WhatsApp's own time (docs/api.md)
    if with_contact:
        data["contact"] = contact_data(chat.contact)
    data["media"] = media_data(chat)
    return data


def media_data(chat: Chat) -> dict[str, Any] | None:
    """The media an inbound chat carried, and whether `GET /api/chats/{uuid}/media` has it
    yet: `pending` until fetched, then `available`, or `failed`. Null for other chats."""
    if chat.media_id is None:  # no query for the chats without media
        return None
    media = chat.media
    return {
        "type": media.kind,
        "status": media.status,
        "mime_type": media.mime_type or None,
        "file_name": media.file_name or None,
        "file_size": media.size if media.status == "available" else None,
    }


def chat_record(chat: Chat) -> dict[str, Any]:
    """A chat in /api/chats: the api.md record, and why it failed when it did."""
    data = chat_data(chat)
    data["error"] = None
    if chat.status == ChatStatus.FAILED:
        data["error"] = {
            "code": chat.error_code,
            "message": chat.error_title,
            "details": chat.error_details,
        }
    return data


def status_history(chat: Chat) -> list[dict[str, Any]]:
    """The chat's status events, oldest first (expected prefetched)."""
    return [
        {
            "status": event.status,
            "timestamp": laravel_datetime(event.timestamp),
            "error_code": event.error_code,
            "error_title": event.error_title or None,
            "pricing": event.pricing,
            "conversation": event.conversation,
        }
        for event in chat.status_events.all()
    ]


def chat_detail(chat: Chat, *, new: bool = False) -> dict[str, Any]:
    """The chat as `GET /api/chats/{uuid}` shows it, as its events carry it too. A chat
    just recorded (`new`) has no status history yet."""
    return {**chat_record(chat), "statuses": [] if new else status_history(chat)}


def template_metadata_text(template: MessageTemplate) -> str:
    """The template as the channel describes it (Graph's template object), JSON-encoded
    like a chat's metadata, as the original product lists it."""
    return json_text(
        canonical(
            {
                "name": template.name,
                "components": template.components,
                "language": template.language,
                "status": template.status,
                "category": template.category,
                "id": template.external_id,
            }
        )
    )


def template_data(template: MessageTemplate) -> dict[str, Any]:
    return {
        "id": template.id,
        "uuid": str(template.uuid),
        "organization_id": template.organization_id,
        "name": template.name,
        "language": template.language,
        "category": template.category,
        "status": template.status,
        "reason": template.reason or None,
        "quality": template.quality or None,
        "components": template.components,
        "external_id": template.external_id,
        "metadata": template_metadata_text(template),
        "created_at": laravel_datetime(template.created_at),
        "updated_at": laravel_datetime(template.updated_at),
    }


def channel_data(channel: Channel) -> dict[str, Any]:
    """`GET /api/channel` (contract section 14): the number and its health as WhatsApp
    last reported them. The sandbox's number is always healthy."""
    if channel.kind == ChannelKind.SANDBOX:
        health = {
            "quality_rating": QualityRating.GREEN.value,
            "messaging_limit": "TIER_UNLIMITED",
            "account_status": "ACTIVE",
            "restrictions": [],
        }
    else:
        health = {
            "quality_rating": channel.quality_rating,
            "messaging_limit": channel.messaging_limit or None,
            "account_status": channel.account_status or None,
            "restrictions": channel.restrictions or [],
        }
    return {
        "phone_number_id": channel.phone_number_id or None,
        "display_phone_number": channel.display_phone_number or None,
        "verified_name": channel.verified_name or None,
        **health,
        "enforce_service_window": channel.enforce_service_window,
        "updated_at": iso_datetime(channel.health_updated_at),
    }


def send_response_data(
    sent: Chat,
    *,
    phone_input: str,
    wa_id: str,
    chat: dict[str, Any],
    message_status: bool,
    messaging_product: str = "whatsapp",
) -> dict[str, Any]:
    """The inner object of the send endpoints' answer (api.md), which the original
    product's message.sent event carries too (`message_status`: shown)."""
    message: dict[str, Any] = {"id": sent.wam_id}
    if message_status:
        message["message_status"] = sent.status
    return {
        "success": True,
        "data": {
            "messaging_product": messaging_product,
            "contacts": [{"input": phone_input, "wa_id": wa_id}],
            "messages": [message],
            "chat": chat,
        },
    }
