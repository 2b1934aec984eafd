"""The inbox's events (docs/events.md): `conversation.created` when a chat makes a
conversation, `conversation.updated` when its status, assignee or labels change (staff,
the API, or an inbound message reopening it). Each is emitted in the transaction of the
change, with the conversation as `GET /api/conversations/{uuid}` shows it, built only
when an endpoint wants it."""

from events.services import emit_events
from inbox.representations import conversation_data
from sending.models import Conversation


def emit_conversations(event: str, conversations: list[Conversation]) -> None:
    if conversations:
        emit_events(
            organization_id=conversations[0].organization_id,
            event=event,
            data=lambda: [conversation_data(c) for c in conversations],
        )
