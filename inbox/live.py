"""Live updates of the admin inbox's open pages (docs/inbox.md, "Live updates").

Every open inbox page asks `GET /admin/inbox/live/<token>` every two seconds, with the
ETag it last got in `If-None-Match`; the answer is a 304 until something it shows has
changed, then a 200 with the new ETag, and the page fetches itself again. Fifty open
pages make 25 of these requests a second, so each costs one or two indexed queries and
no session: the token, signed when the page was rendered for a staff member who may see
it, names what the page shows (a conversation, or an organization's list) and who looks
at it. It says only *that* something changed; what changed is read by the page's own
view, through the admin's login and scoping. A token lives for an hour; every page
fetch brings a new one.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.db.models import Max, OuterRef, Q, Subquery
from django.utils import timezone

from inbox.models import Note
from sending.models import SERVICE_WINDOW, Chat, Conversation

SALT = "inbox.live"
TOKEN_AGE = 3600  # seconds
# The page shows the latest messages: their ticks and media are what may still change.
WATCHED_MESSAGES = 50


@dataclass(frozen=True)
class Watch:
    """What a live token names: a conversation page (`conversation`) or an
    organization's list (`organization`), looked at by `user` (an agent, or not)."""

    user: int
    agent: bool
    conversation: int | None = None
    organization: int | None = None


def token_for(watch: Watch) -> str:
    claims = {"u": watch.user, "a": int(watch.agent)}
    if watch.conversation is not None:
        claims["c"] = watch.conversation
    if watch.organization is not None:
        claims["o"] = watch.organization
    return signing.dumps(claims, salt=SALT, compress=False)


def watch_of(token: str) -> Watch | None:
    """The token's watch; None when it is forged, expired or malformed."""
    try:
        claims = signing.loads(token, salt=SALT, max_age=TOKEN_AGE)
        return Watch(
            user=int(claims["u"]),
            agent=bool(claims["a"]),
            conversation=int(claims["c"]) if "c" in claims else None,
            organization=int(claims["o"]) if "o" in claims else None,
        )
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None


def etag(watch: Watch) -> str | None:
    """A short digest of what the watched page shows, as an ETag; None when the user may
    not see it any more (an agent whose conversation went to someone else) or it is gone.
    A page takes it before it reads what it shows, so no change between falls through."""
    if watch.conversation is not None:
        state = conversation_state(watch, watch.conversation)
    elif watch.organization is not None:
        state = list_state(watch.organization)
    else:
        return None
    if state is None:
        return None
    return f'"{hashlib.sha256(repr(state).encode()).hexdigest()[:32]}"'


def conversation_state(watch: Watch, conversation: int) -> tuple[Any, ...] | None:
    """Two indexed queries: the conversation's row (its state, the newest message's time
    and the newest note), then the ticks and media of its latest messages."""
    visible = Conversation.objects.filter(pk=conversation)
    if watch.agent:
        visible = visible.filter(Q(assignee__isnull=True) | Q(assignee_id=watch.user))
    newest_note = Note.objects.filter(conversation=OuterRef("pk")).order_by("-id").values("id")
    row = (
        visible.annotate(newest_note=Subquery(newest_note[:1]))
        .values_list(
            "status",
            "assignee_id",
            "labels",
            "unread",
            "last_message_at",
            "last_inbound_at",
            "newest_note",
        )
        .first()
    )
    if row is None:
        return None
    # The window closes with time alone: the composer changes then too.
    last_inbound = row[5]
    window_open = last_inbound is not None and last_inbound + SERVICE_WINDOW > timezone.now()
    messages = tuple(
        Chat.objects.filter(conversation_id=conversation)
        .order_by("-id")
        .values_list("id", "status", "media__state", "deleted_at")[:WATCHED_MESSAGES]
    )
    return (row, window_open, messages)


def list_state(organization: int) -> tuple[Any, ...]:
    """One indexed query: the organization's newest message (a new message moves its
    conversation up the list and adds to its badge). Message times have WhatsApp's
    one-second resolution, so the newest chat's id tells two messages apart instead."""
    newest = Chat.objects.live().filter(organization_id=organization)
    return tuple(newest.aggregate(newest=Max("id")).values())
