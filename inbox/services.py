"""The inbox's writes: staff's changes to a conversation, reading it, notes, and
answering in it. Keyword-only; each owns its transaction. The API passes no `actor`
(its tokens are the organization's); the admin passes the staff member, and an agent
may act only on conversations unassigned or assigned to them (docs/inbox.md, "Roles").

Messages in the API's language (English), marked for the admin's translations.
"""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import Membership
from accounts.roles import is_agent
from events.models import Event
from inbox.events import emit_conversations
from inbox.models import NOTE_MAX_LENGTH, Note
from inbox.queries import add_conversations, note_change
from sending.models import Conversation, ConversationStatus
from sending.recorded import ConversationsChanged
from sending.services import (
    CONVERSATION_WINDOW,
    SendResult,
    ServiceWindowClosed,
    send_media,
    send_message,
    send_template,
)


class Unset:
    """A keyword argument not given: that field is left as it is."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = Unset()

MAX_LABELS = 20
LABEL_MAX_LENGTH = 50

NOT_STAFF = gettext_noop("The assignee must be a staff member of the organization.")
UNKNOWN_STATUS = gettext_noop("The status must be one of: open, pending, resolved.")
LABELS_LIST = gettext_noop("The labels must be a list of strings.")
TOO_MANY_LABELS = gettext_noop("A conversation can have at most %(limit)d labels.")
LABEL_TOO_LONG = gettext_noop("A label can have at most %(limit)d characters.")
BODY_REQUIRED = gettext_noop("The body field is required.")
BODY_TOO_LONG = gettext_noop("The body can have at most %(limit)d characters.")
ONE_KIND = gettext_noop("Send exactly one of message, template or media.")
NOT_YOURS = gettext_noop("This conversation is assigned to another staff member.")


def on_conversations_changed(record: ConversationsChanged) -> None:
    """Conversations chats just created or reopened (sending's announcement, in their
    transaction; on the webhook's path, where the batch has looked the endpoints up
    already): their events, and the organization's count of conversations."""
    emit_conversations(Event.CONVERSATION_CREATED, record.created)
    emit_conversations(Event.CONVERSATION_UPDATED, record.reopened)
    if record.created:
        add_conversations(record.created[0].organization_id, len(record.created))


def check_may_act(actor, conversation: Conversation) -> None:
    """An agent acts only on conversations unassigned or assigned to them (the API, with
    no actor, and managers on all of the organization's)."""
    if actor is not None and is_agent(actor) and conversation.assignee_id not in (None, actor.pk):
        raise PermissionDenied(NOT_YOURS)


def staff_member(conversation: Conversation, user) -> Any:
    """`user` (a User, or None for nobody) if an active staff member of the conversation's
    organization; a ValidationError on `assignee` otherwise."""
    if user is None:
        return None
    is_member = (
        isinstance(user, get_user_model())
        and user.is_active
        and user.is_staff
        and Membership.objects.filter(
            user_id=user.pk, organization_id=conversation.organization_id
        ).exists()
    )
    if not is_member:
        raise ValidationError({"assignee": [NOT_STAFF]})
    return user


def clean_status(status: Any) -> str:
    if status not in ConversationStatus.values:
        raise ValidationError({"status": [UNKNOWN_STATUS]})
    return str(status)


def clean_labels(labels: Any) -> list[str]:
    """Trimmed, without blanks or repeats (the first spelling kept), in the order given."""
    if not isinstance(labels, list | tuple) or not all(isinstance(x, str) for x in labels):
        raise ValidationError({"labels": [LABELS_LIST]})
    cleaned: list[str] = []
    seen: set[str] = set()
    for index, label in enumerate(labels):
        label = label.strip()
        if len(label) > LABEL_MAX_LENGTH:
            too_long = ValidationError(LABEL_TOO_LONG, params={"limit": LABEL_MAX_LENGTH})
            raise ValidationError({f"labels.{index}": [too_long]})
        if label and label.casefold() not in seen:
            seen.add(label.casefold())
            cleaned.append(label)
    if len(cleaned) > MAX_LABELS:
        too_many = ValidationError(TOO_MANY_LABELS, params={"limit": MAX_LABELS})
        raise ValidationError({"labels": [too_many]})
    return cleaned


def update_conversation(
    *,
    conversation: Conversation,
    actor=None,
    status: str = UNSET,
    assignee=UNSET,
    labels: list[str] = UNSET,
) -> Conversation:
    """Change the fields given (`assignee`: a User, or None to unassign) and emit
    conversation.updated when any changed; the conversation as it is now.

    The row is locked, and compared with `conversation` as the caller read it:
    - an assignee set meanwhile by someone else wins (two staff members assigning at
      once: the first wins, and both are answered with its assignee);
    - an inbound message recorded meanwhile keeps the conversation open (a resolve
      racing a customer's message never hides that message).
    """
    check_may_act(actor, conversation)
    if status is not UNSET:
        status = clean_status(status)
    if assignee is not UNSET:
        assignee = staff_member(conversation, assignee)
    if labels is not UNSET:
        labels = clean_labels(labels)
    with transaction.atomic():
        current = locked(conversation)
        check_may_act(actor, current)
        changes: dict[str, Any] = {}
        if status is not UNSET and status != current.status:
            # Either moves with each inbound message (a late one may not move the time).
            written_since = (current.unread, current.last_inbound_at) != (
                conversation.unread,
                conversation.last_inbound_at,
            )
            if status == ConversationStatus.OPEN or not written_since:
                changes.update(status=status, status_changed_at=timezone.now())
        if assignee is not UNSET:
            wanted = assignee.pk if assignee is not None else None
            taken_since = current.assignee_id != conversation.assignee_id
            if wanted != current.assignee_id and not taken_since:
                changes["assignee_id"] = wanted
        if labels is not UNSET and labels != current.labels:
            changes["labels"] = labels
        if changes:
            Conversation.objects.filter(pk=current.pk).update(**changes)
            # Locked after the conversation's row, as the webhook's batch locks them.
            note_change(current.organization_id)
            for name, value in changes.items():
                setattr(current, name, value)
            emit_conversations(Event.CONVERSATION_UPDATED, [current])
    return current


def locked(conversation: Conversation) -> Conversation:
    """The conversation's row as it is now, locked for the transaction, with what its
    record shows. Locked first, then read: a locking read that waited would join the
    assignee as it found it before the wait (PostgreSQL rechecks the locked row alone)."""
    Conversation.objects.select_for_update().filter(pk=conversation.pk).exists()
    return Conversation.objects.select_related("contact", "number", "assignee").get(
        pk=conversation.pk
    )


def mark_read(*, conversation: Conversation, actor=None) -> Conversation:
    """`unread` becomes 0 (no event: reading changes nothing the customer or a receiver
    sees)."""
    check_may_act(actor, conversation)
    with transaction.atomic():
        if Conversation.objects.filter(pk=conversation.pk, unread__gt=0).update(unread=0):
            note_change(conversation.organization_id)  # the list's badge goes
    conversation.unread = 0
    return conversation


def add_note(*, conversation: Conversation, author=None, body: str) -> Note:
    """An internal note; never sent to the customer. `author`: the staff member (None
    through the API)."""
    check_may_act(author, conversation)
    body = (body or "").strip() if isinstance(body, str) else ""
    if not body:
        raise ValidationError({"body": [BODY_REQUIRED]})
    if len(body) > NOTE_MAX_LENGTH:
        too_long = ValidationError(BODY_TOO_LONG, params={"limit": NOTE_MAX_LENGTH})
        raise ValidationError({"body": [too_long]})
    return Note.objects.create(
        organization_id=conversation.organization_id,
        conversation=conversation,
        author=author,
        body=body,
    )


def send_in_conversation(
    *,
    conversation: Conversation,
    actor=None,
    message: str | None = None,
    template: dict[str, Any] | None = None,
    media: dict[str, Any] | None = None,
    reply_to: str | None = None,
) -> SendResult:
    """Send to the conversation's contact from its number, through sending's services
    (their errors unchanged): a text (`message`), a template (`template`, as
    /api/send/template takes it) or a media message (`media`: `media_type`, `media_url`
    or `media_id`, `caption`, `file_name`), answering `reply_to` when given. The chat
    records who sent it (`created_by`: the staff member, 0 through the API).

    Anything but a template while the customer-service window is closed is a
    ServiceWindowClosed, before the channel is called, whatever the organization's
    `enforce_service_window` says: WhatsApp would refuse it.
    """
    check_may_act(actor, conversation)
    if sum(part is not None for part in (message, template, media)) != 1:
        raise ValidationError({"message": [ONE_KIND]})
    if template is None and not window_open(conversation):
        raise ServiceWindowClosed(CONVERSATION_WINDOW)
    contact = conversation.contact
    common: dict[str, Any] = {
        "organization": conversation.organization,
        "phone": contact.phone or "",
        "contact": contact,
        "sender": conversation.number,
        "reply_to": reply_to or None,
        "created_by": actor.pk if actor is not None else 0,
    }
    if message is not None:
        return send_message(message=message, **common)
    if template is not None:
        return send_template(template=template, **common)
    return send_media(**media, **common)  # type: ignore[arg-type]


def window_open(conversation: Conversation) -> bool:
    expires = conversation.window_expires_at
    return expires is not None and expires > timezone.now()
