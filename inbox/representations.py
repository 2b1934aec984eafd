"""Conversations and notes as the API shows them (docs/inbox.md), for the API, the
events and the admin alike."""

from typing import Any

from contacts.representations import contact_data
from inbox.models import Note
from messaging_project.core.formats import iso_datetime
from sending.models import Conversation


def conversation_data(conversation: Conversation) -> dict[str, Any]:
    """The conversation record (its contact, number and assignee loaded)."""
    assignee = conversation.assignee
    return {
        "uuid": str(conversation.uuid),
        "contact": contact_data(conversation.contact),
        "number": str(conversation.number.uuid),
        "status": conversation.status,
        "assignee": assignee.get_username() if assignee is not None else None,
        "labels": list(conversation.labels),
        "unread": conversation.unread,
        "last_message_at": iso_datetime(conversation.last_message_at),
        "last_inbound_at": iso_datetime(conversation.last_inbound_at),
        "window_expires_at": iso_datetime(conversation.window_expires_at),
        "created_at": iso_datetime(conversation.created_at),
    }


def note_data(note: Note) -> dict[str, Any]:
    """A note (its author loaded): `author` is the staff member's username, null when
    written through the API."""
    return {
        "uuid": str(note.uuid),
        "body": note.body,
        "author": note.author.get_username() if note.author is not None else None,
        "created_at": iso_datetime(note.created_at),
    }
