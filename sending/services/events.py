"""Sending's events (docs/events.md): a message received, a message sent, a message
whose status moved forward. Each is emitted in the transaction that records it, with
the chat as `GET /api/chats/{uuid}` shows it, built only when an endpoint wants it.
The original product's bodies (`swiftchats` endpoints) carry instead the WhatsApp change
of the message or status (one message or status a body) and, for a message sent, the
/api/send response; built only when such an endpoint wants the event.

Kept apart from inbound.py and send.py, which call it in a line or two each.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.db.models import QuerySet

from events.models import Event
from events.services import Listener, emit_events, subscribed_endpoints
from sending.models import Chat, ChatStatusEvent
from sending.representations import chat_data, chat_detail, send_response_data

# What a change's value says besides its messages and statuses (metadata, contacts, ...).
ITEM_KEYS = ("messages", "statuses")


def whatsapp_change(value: Mapping[str, Any] | None, **items: list[dict]) -> dict[str, Any]:
    """A `messages` change as WhatsApp posts it, holding only `items` (`messages=[...]` or
    `statuses=[...]`) beside the rest of its value."""
    rest = {key: item for key, item in (value or {}).items() if key not in ITEM_KEYS}
    return {"value": {"messaging_product": "whatsapp", **rest, **items}, "field": "messages"}


def sent_data(chat: Chat) -> dict[str, Any]:
    """The original's message.sent `data`: its /api/send response's inner object."""
    return {
        "data": send_response_data(
            chat,
            phone_input=f"+{chat.contact.phone}" if chat.contact.phone else "",
            wa_id=chat.contact.phone,
            chat=chat_data(chat),
            message_status=True,
        )
    }


def original_data(event: str, chat: Chat, change: Callable[[], dict] | None) -> dict[str, Any]:
    if event == Event.MESSAGE_SENT:
        return sent_data(chat)
    return {"data": change() if change is not None else whatsapp_change(None, messages=[])}


def emit_chat(event: str, chat: Chat, *, change: Callable[[], dict] | None = None) -> None:
    """message.received or message.sent for a chat just recorded (its contact loaded);
    `change`: the WhatsApp change of a message received."""
    emit_events(
        organization_id=chat.organization_id,
        event=event,
        data=lambda: [chat_detail(chat, new=True)],
        swiftchats=lambda: [original_data(event, chat, change)],
    )


def emit_chats(event: str, chats: list[Chat]) -> None:
    """`emit_chat` for many chats of one organization (a campaign's batch): one emission."""
    if chats:
        emit_events(
            organization_id=chats[0].organization_id,
            event=event,
            data=lambda: [chat_detail(chat, new=True) for chat in chats],
            swiftchats=lambda: [original_data(event, chat, None) for chat in chats],
        )


def emit_changed_chat(event: str, chat_id: int, organization_id: int) -> None:
    """message.updated or message.deleted: the chat as it is now, read only when an
    endpoint wants it."""
    emit_events(
        organization_id=organization_id,
        event=event,
        data=lambda: [
            chat_detail(chat)
            for chat in Chat.objects.filter(pk=chat_id)
            .select_related("contact", "media", "number")
            .prefetch_related("status_events")
        ],
    )


def status_listeners(chats: Iterable[Chat]) -> list[Listener]:
    """The endpoints that want the status updates of these chats (one organization's):
    none means the statuses are moved without finding out which chats moved."""
    first = next(iter(chats), None)
    if first is None:
        return []
    return subscribed_endpoints(first.organization_id, Event.MESSAGE_STATUS_UPDATE)


def move_forward(chats: QuerySet[Chat], status: str, *, watched: bool) -> list[int]:
    """Set `status` on `chats` (a query that names the statuses it may move from); the
    ids it moved when someone listens. The rows are locked first (the caller's
    transaction), so a concurrent delivery moving the same chats waits, then no longer
    finds them in a lower status, and each move is reported once."""
    if not watched:
        chats.update(status=status)
        return []
    moved = list(chats.select_for_update().values_list("pk", flat=True))
    if moved:
        Chat.objects.filter(pk__in=moved).update(status=status)
    return moved


def status_change(chat: Chat, cause: Any) -> dict[str, Any]:
    """The WhatsApp change of the status that moved `chat`: as WhatsApp sent it, or for a
    status kept aside until its chat was recorded (stored without it), rebuilt."""
    if getattr(cause, "item", None) is not None:
        return whatsapp_change(cause.value, statuses=[cause.item])
    item: dict[str, Any] = {"id": chat.wam_id, "status": chat.status}
    if isinstance(cause, ChatStatusEvent):
        item.update(status=cause.status, timestamp=str(int(cause.timestamp.timestamp())))
        if cause.error_details:
            item["errors"] = [cause.error_details]
    item["recipient_id"] = chat.contact.phone
    return whatsapp_change(None, statuses=[item])


def emit_status_updates(
    chat_ids: Iterable[int], listeners: list[Listener], causes: Mapping[int, Any] | None = None
) -> None:
    """message.status.update for each chat that moved, as it is now; `causes`: the status
    event that moved each (for the original product's body)."""
    chat_ids = sorted(set(chat_ids))
    if not listeners or not chat_ids:
        return
    chats = list(
        Chat.objects.filter(pk__in=chat_ids)
        .select_related("contact", "number")
        .prefetch_related("status_events")
        .order_by("id")
    )
    emit_events(
        organization_id=chats[0].organization_id,
        event=Event.MESSAGE_STATUS_UPDATE,
        data=lambda: [chat_detail(chat) for chat in chats],
        endpoints=listeners,
        swiftchats=lambda: [
            {"data": status_change(chat, (causes or {}).get(chat.pk))} for chat in chats
        ],
    )
