"""Sending's events (docs/events.md): a message received, a message sent, a message
whose status moved forward. Each is emitted in the transaction that records it, with
the chat as `GET /api/chats/{uuid}` shows it, built only when an endpoint wants it.
The original product's bodies (`swiftchats` endpoints) carry instead the WhatsApp change
of the message or status (one message or status a body; every status WhatsApp sends, not
only those that move a chat) and, for a message sent, the /api/send response, or for a
send refused, WhatsApp's error; built only when such an endpoint wants the event.

Kept apart from inbound.py and send.py, which call it in a line or two each.
"""

from collections.abc import Callable, Mapping
from typing import Any

from business_numbers.gateway import GatewayError
from events.models import Event, Format
from events.services import emit_events, subscribed_endpoints
from sending.models import Chat
from sending.representations import chat_data, chat_detail, refused_send_data, send_response_data

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


def emit_refused_send(chat: Chat, error: GatewayError) -> None:
    """message.sent with `success: false` and WhatsApp's error, for a send the channel did
    not accept (its failed chat just recorded), to the `swiftchats` endpoints: the original
    posts it for every send. Our own format has no such event (the send's answer says it)."""
    listeners = subscribed_endpoints(chat.organization_id, Event.MESSAGE_SENT)
    originals = [listener for listener in listeners if listener.format == Format.SWIFTCHATS]
    if originals:
        emit_events(
            organization_id=chat.organization_id,
            event=Event.MESSAGE_SENT,
            data=lambda: [],
            endpoints=originals,
            swiftchats=lambda: [{"data": refused_send_data(error)}],
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


def emit_status_updates(chats: list[Chat], history: Mapping[int, list[Any]]) -> None:
    """message.status.update for each of these chats of one organization, which just
    moved (each with its contact and number, as it is now; `history`: its status
    events), to the endpoints in our own format that want it: built from them, with no
    query but the endpoints' (once per batch). `swiftchats` endpoints get every status as
    it came instead: forward_statuses."""
    if not chats:
        return
    listeners = subscribed_endpoints(chats[0].organization_id, Event.MESSAGE_STATUS_UPDATE)
    ours = [listener for listener in listeners if listener.format != Format.SWIFTCHATS]
    if ours:
        emit_events(
            organization_id=chats[0].organization_id,
            event=Event.MESSAGE_STATUS_UPDATE,
            data=lambda: [chat_detail(chat, statuses=history.get(chat.pk, [])) for chat in chats],
            endpoints=ours,
        )


def forward_statuses(organization_id: int, statuses: list[tuple[dict, Any]]) -> None:
    """message.status.update to the `swiftchats` endpoints for each status WhatsApp sent
    (its item and its change's value), as the original passes on every status webhook:
    also for a message this service did not send (a business cutting over from the
    original) and a status that moves no chat. A status delivered again is not passed on."""
    if not statuses:
        return
    listeners = subscribed_endpoints(organization_id, Event.MESSAGE_STATUS_UPDATE)
    originals = [listener for listener in listeners if listener.format == Format.SWIFTCHATS]
    if originals:
        emit_events(
            organization_id=organization_id,
            event=Event.MESSAGE_STATUS_UPDATE,
            data=lambda: [],
            endpoints=originals,
            swiftchats=lambda: [
                {"data": whatsapp_change(value, statuses=[item])} for item, value in statuses
            ],
        )
