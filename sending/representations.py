"""Chats as the API shows them (api.md's shapes), for the API, the events
and the admin alike."""

from collections.abc import Iterable
from typing import Any, cast

from business_numbers.gateway import GatewayError
from business_numbers.representations import canonical
from contacts.representations import contact_data
from messaging_project.core.formats import iso_datetime, json_text, laravel_datetime
from sending.models import Chat, ChatMedia, ChatStatus, ChatStatusEvent


def chat_data(
    chat: Chat, *, with_contact: bool = True, contact: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The chat record of api.md. The template send response leaves out the contact
    and the deletion fields, as the reference example does. `contact`: the chat's
    contact's record, when made already."""
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
        data["contact"] = contact if contact is not None else contact_data(chat.contact)
    data["media"] = media_data(chat)
    return data


def media_data(chat: Chat) -> dict[str, Any] | None:
    """The media an inbound chat carried, and whether `GET /api/chats/{uuid}/media` has it
    yet: `pending` until fetched, then `available`, or `failed`. Null for other chats."""
    if chat.media_id is None:  # no query for the chats without media
        return None
    media = cast(ChatMedia, chat.media)  # media_id is set
    return {
        "type": media.kind,
        "status": media.status,
        "mime_type": media.mime_type or None,
        "file_name": media.file_name or None,
        "file_size": media.size if media.status == "available" else None,
    }


def chat_record(chat: Chat, *, contact: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat in /api/chats: the api.md record, and why it failed when it did."""
    data = chat_data(chat, contact=contact)
    data["number"] = str(chat.number.uuid)  # the organization's number (docs/numbers.md)
    data["error"] = None
    if chat.status == ChatStatus.FAILED:
        data["error"] = {
            "code": chat.error_code,
            "message": chat.error_title,
            "details": chat.error_details,
        }
    return data


def chat_records(chats: Iterable[Chat]) -> list[dict[str, Any]]:
    """chat_record of each chat, each contact's record made once: a conversation's page
    is one contact's chats."""
    contacts: dict[int, dict[str, Any]] = {}
    records = []
    for chat in chats:
        if chat.contact_id not in contacts:
            contacts[chat.contact_id] = contact_data(chat.contact)
        records.append(chat_record(chat, contact=contacts[chat.contact_id]))
    return records


def status_history(
    chat: Chat, events: Iterable[ChatStatusEvent] | None = None
) -> list[dict[str, Any]]:
    """The chat's status events, oldest first: `events`, or its own (expected
    prefetched)."""
    return [
        {
            "status": event.status,
            "timestamp": laravel_datetime(event.timestamp),
            "error_code": event.error_code,
            "error_title": event.error_title or None,
            "pricing": event.pricing,
            "conversation": event.conversation,
        }
        for event in (chat.status_events.all() if events is None else events)
    ]


def chat_detail(
    chat: Chat, *, new: bool = False, statuses: Iterable[ChatStatusEvent] | None = None
) -> dict[str, Any]:
    """The chat as `GET /api/chats/{uuid}` shows it, as its events carry it too. A chat
    just recorded (`new`) has no status history yet; `statuses`: its status events, when
    the caller has them."""
    return {**chat_record(chat), "statuses": [] if new else status_history(chat, statuses)}


def refused_send_data(error: GatewayError) -> dict[str, Any]:
    """The original product's answer to a send WhatsApp refused, which its message.sent
    event carries: `success: false`, Graph's error body under `data` (its `error` object:
    message, type, code, error_data, fbtrace_id, as the gateway kept them) and the error's
    text under `message`."""
    graph_error: dict[str, Any] = {"message": error.message}
    if error.type is not None:
        graph_error["type"] = error.type
    if error.code is not None:
        graph_error["code"] = error.code
    if error.details is not None:
        graph_error["error_data"] = {"messaging_product": "whatsapp", "details": error.details}
    if error.fbtrace_id is not None:
        graph_error["fbtrace_id"] = error.fbtrace_id
    return {"success": False, "data": {"error": graph_error}, "message": error.message}


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
