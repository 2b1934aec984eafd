"""Live updates of the admin inbox's open pages (docs/inbox.md, "Live updates").

Every open inbox page asks `GET /admin/inbox/live/<token>` every two seconds, with the
ETag it last got in `If-None-Match`; the answer is a 304 until something it shows has
changed, then a 200 with the new ETag, and the page fetches itself again. Fifty open
pages make 25 of these requests a second, so each costs one indexed query and
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
from django.db import connection
from django.utils import timezone

from inbox.models import ConversationTotal, Note
from sending.models import SERVICE_WINDOW, Chat, ChatMedia, Conversation

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


# Hand-written: building these through the ORM cost more than running them. A
# conversation's state is one statement: its row (its state, whether its window is
# open, the newest message's time and the newest note) beside each of its latest
# messages' tick and media, its id written in so that the planner walks the
# (conversation, id) index; the conversation's row alone when it has no message.
CONVERSATION_STATE = f"""
    SELECT c.status, c.assignee_id, c.labels, c.unread, c.last_message_at,
           c.last_inbound_at > %s,
           (SELECT n.id FROM {Note._meta.db_table} n
             WHERE n.conversation_id = %s ORDER BY n.id DESC LIMIT 1),
           latest.id, latest.status, latest.state, latest.deleted_at
      FROM {Conversation._meta.db_table} c
      LEFT JOIN (
          SELECT m.id, m.status, f.state, m.deleted_at
            FROM {Chat._meta.db_table} m
            LEFT JOIN {ChatMedia._meta.db_table} f ON f.id = m.media_id
           WHERE m.conversation_id = %s
           ORDER BY m.id DESC
           LIMIT {WATCHED_MESSAGES}
      ) latest ON TRUE
     WHERE c.id = %s AND (%s OR c.assignee_id IS NULL OR c.assignee_id = %s)
     ORDER BY latest.id DESC
"""
# The organizations' live chats are indexed by (organization, id): one index entry; the
# count of changes is the organization's one row of ConversationTotal.
LIST_STATE = f"""
    SELECT (SELECT max(id) FROM {Chat._meta.db_table}
             WHERE organization_id = %s AND deleted_at IS NULL),
           (SELECT changes FROM {ConversationTotal._meta.db_table} WHERE organization_id = %s)
"""
CONVERSATION_COLUMNS = 7  # CONVERSATION_STATE's columns before the messages'


def conversation_state(watch: Watch, conversation: int) -> tuple[Any, ...] | None:
    """One indexed query (CONVERSATION_STATE): the conversation's state and the ticks and
    media of its latest messages. An agent's watch finds only the unassigned or their
    own."""
    # The window closes with time alone: the composer changes then too.
    window_start = connection.ops.adapt_datetimefield_value(timezone.now() - SERVICE_WINDOW)
    with connection.cursor() as cursor:
        cursor.execute(
            CONVERSATION_STATE,
            [window_start, conversation, conversation, conversation, not watch.agent, watch.user],
        )
        found = cursor.fetchall()
    if not found:
        return None
    messages = tuple(row[CONVERSATION_COLUMNS:] for row in found if row[CONVERSATION_COLUMNS])
    return (found[0][:CONVERSATION_COLUMNS], messages)


def list_state(organization: int) -> tuple[Any, ...]:
    """One indexed query: the organization's newest message (a new message moves its
    conversation up the list and adds to its badge; message times have WhatsApp's
    one-second resolution, so the newest chat's id tells two messages apart instead),
    and its count of changes to conversations (another's assign, labels, resolve or
    read changes what the list shows too)."""
    with connection.cursor() as cursor:
        cursor.execute(LIST_STATE, [organization, organization])
        return tuple(cursor.fetchone())
