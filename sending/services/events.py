"""Sending's events (docs/events.md): a message received, a message sent, a message
whose status moved forward. Each is emitted in the transaction that records it, with
the chat as `GET /api/chats/{uuid}` shows it, built only when an endpoint wants it.

Kept apart from inbound.py and send.py, which call it in a line or two each.
"""

from collections.abc import Iterable

from django.db.models import QuerySet

from events.models import Event
from events.services import Listener, emit_events, subscribed_endpoints
from sending.models import Chat
from sending.representations import chat_detail


def emit_chat(event: str, chat: Chat) -> None:
    """message.received or message.sent for a chat just recorded (its contact loaded)."""
    emit_events(
        organization_id=chat.organization_id,
        event=event,
        data=lambda: [chat_detail(chat, new=True)],
    )


def emit_chats(event: str, chats: list[Chat]) -> None:
    """`emit_chat` for many chats of one organization (a campaign's batch): one emission."""
    if chats:
        emit_events(
            organization_id=chats[0].organization_id,
            event=event,
            data=lambda: [chat_detail(chat, new=True) for chat in chats],
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
            .select_related("contact", "media")
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


def emit_status_updates(chat_ids: Iterable[int], listeners: list[Listener]) -> None:
    """message.status.update for each chat that moved, as it is now."""
    chat_ids = sorted(set(chat_ids))
    if not listeners or not chat_ids:
        return
    chats = list(
        Chat.objects.filter(pk__in=chat_ids)
        .select_related("contact")
        .prefetch_related("status_events")
        .order_by("id")
    )
    emit_events(
        organization_id=chats[0].organization_id,
        event=Event.MESSAGE_STATUS_UPDATE,
        data=lambda: [chat_detail(chat) for chat in chats],
        endpoints=listeners,
    )
