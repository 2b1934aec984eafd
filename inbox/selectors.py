"""The inbox's reads: the conversation list with its tabs and filters, a conversation's
messages and notes. Querysets, for the API's pages and the admin's alike."""

import re
import uuid

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q, QuerySet

from accounts.roles import is_agent
from inbox import queries
from inbox.models import Note
from sending.models import Chat, Conversation, ConversationStatus


class Tab:
    """The inbox's tabs: `mine` and `unassigned` hold the conversations not resolved,
    `all` every one not resolved, `resolved` the resolved ones."""

    MINE = "mine"
    UNASSIGNED = "unassigned"
    ALL = "all"
    RESOLVED = "resolved"
    CHOICES = (MINE, UNASSIGNED, ALL, RESOLVED)


# `assignee` that asks for the conversations assigned to nobody.
NOBODY = "none"
# A page shows its number's uuid only: its secrets, decrypted on loading, are left out.
NUMBER_SECRETS = ("number__access_token", "number__app_secret", "number__verify_token")


def visible_to(queryset: QuerySet[Conversation], user) -> QuerySet[Conversation]:
    """An agent's share: the conversations unassigned or assigned to them. Managers,
    superusers and the API (no user) see them all."""
    if user is not None and is_agent(user):
        return queryset.filter(Q(assignee__isnull=True) | Q(assignee_id=user.pk))
    return queryset


def conversations_for(
    *,
    organization,
    user=None,
    tab: str | None = None,
    status: str | None = None,
    assignee=None,
    unread: bool | None = None,
    label: str | None = None,
    search: str | None = None,
) -> QuerySet[Conversation]:
    """The organization's conversations, newest message first, with what their record
    shows. `user`: the staff member looking (an agent sees only their share; `mine`
    needs them); `assignee`: a User, a username, or "none" for the unassigned;
    `unread`: True for those with unread messages; `label`: those that have it;
    `search`: in the contact's name, or digits in their phone number."""
    conversations = (
        Conversation.objects.filter(organization=organization)
        .select_related("contact", "number", "assignee")
        .defer(*NUMBER_SECRETS)
        .order_by("-last_message_at", "-id")
    )
    conversations = visible_to(conversations, user)
    if tab == Tab.MINE:
        conversations = conversations.filter(assignee_id=user.pk if user is not None else None)
    elif tab == Tab.UNASSIGNED:
        conversations = conversations.filter(assignee__isnull=True)
    if tab in (Tab.MINE, Tab.UNASSIGNED, Tab.ALL):
        conversations = conversations.exclude(status=ConversationStatus.RESOLVED)
    elif tab == Tab.RESOLVED:
        conversations = conversations.filter(status=ConversationStatus.RESOLVED)
    if status:
        conversations = conversations.filter(status=status)
    if assignee is not None:
        conversations = with_assignee(conversations, assignee)
    if unread:
        conversations = conversations.filter(unread__gt=0)
    if label:
        conversations = with_label(conversations, label)
    if search and search.strip():
        conversations = conversations.filter(matching(search))
    return conversations


def conversation_page(
    *, organization_id: int, offset: int, limit: int
) -> tuple[list[Conversation], int | None]:
    """The unfiltered list's page (newest message first) and the organization's total
    (None when the page is empty), in one query."""
    return queries.conversation_page(organization_id, offset, limit)


def conversation_total(*, organization_id: int) -> int:
    """How many conversations the organization has (the unfiltered list's total)."""
    return queries.conversation_total(organization_id)


def with_assignee(conversations: QuerySet[Conversation], assignee) -> QuerySet[Conversation]:
    if isinstance(assignee, get_user_model()):
        return conversations.filter(assignee_id=assignee.pk)
    if assignee == NOBODY:
        return conversations.filter(assignee__isnull=True)
    return conversations.filter(assignee__username=assignee)


def with_label(conversations: QuerySet[Conversation], label: str) -> QuerySet[Conversation]:
    """Those whose labels hold `label`: JSON containment on PostgreSQL; SQLite has none,
    so there the label is found, as a JSON string, in the list's text (ignoring case)."""
    label = label.strip()
    if connection.vendor == "postgresql":
        return conversations.filter(labels__contains=[label])
    return conversations.filter(labels__icontains=label)


def matching(search: str) -> Q:
    """A search's words each in the contact's first or last name, or its digits (when
    it has three or more) in their phone number."""
    by_name = Q()
    for word in search.split():
        by_name &= Q(contact__first_name__icontains=word) | Q(contact__last_name__icontains=word)
    digits = re.sub(r"\D", "", search)
    if len(digits) >= 3:
        return by_name | Q(contact__phone__contains=digits)
    return by_name


def conversation_messages(conversation: Conversation) -> QuerySet[Chat]:
    """The conversation's chats, newest first, with their media."""
    return (
        Chat.objects.live()
        .filter(conversation=conversation)
        .select_related("media")
        .order_by("-id")
    )


def message_page(
    *, organization_id: int, conversation_uuid: uuid.UUID, offset: int, limit: int
) -> tuple[list[Chat], int] | None:
    """A page of the conversation's live chats, newest first, each with its media, contact
    and number (as /api/chats shows a chat), and how many it has, in one query; None when
    the organization has no such conversation."""
    return queries.message_page(organization_id, conversation_uuid, offset, limit)


def notes_of(conversation: Conversation) -> QuerySet[Note]:
    """The conversation's notes, newest first."""
    return Note.objects.filter(conversation=conversation).select_related("author").order_by("-id")
