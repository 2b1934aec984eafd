"""Live updates of the admin inbox's open pages (docs/inbox.md, "Live updates").

Every open inbox page asks `GET /admin/inbox/live/<token>` every two seconds, with the
ETag it last got in `If-None-Match`; the answer is a 304 until something it shows has
changed, then a 200 with the new ETag, and the page fetches itself again. Fifty open
pages make 25 of these requests a second, so each costs one indexed query, no session
and none of the admin's middleware (inbox/middleware.py answers it): the token, signed
when the page was rendered for a staff member who may see it, names what the page shows
(a conversation, or an organization's list) and who looks at it. It says only *that*
something changed; what changed is read by the page's own view, through the admin's
login and scoping. A token lives for an hour; every page fetch brings a new one.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.db import connection
from django.http import HttpResponse, HttpResponseNotModified
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


def answer(token: str, if_none_match: str | None) -> HttpResponse:
    """The live check's answer: 304 while the page's ETag is still `if_none_match`, else
    200 with the new one; 403 for a bad or expired token (the page then reloads through
    the login), 404 when the page may no longer be seen."""
    watch = watch_of(token)
    if watch is None:
        return HttpResponse(status=403)
    tag = etag(watch)
    if tag is None:
        return HttpResponse(status=404)
    response = HttpResponseNotModified() if if_none_match == tag else HttpResponse()
    response["ETag"] = tag
    response["Cache-Control"] = "no-store"
    return response


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
# conversation's state is one row: its state, whether its window is open, its newest
# note, and its latest messages' ids, ticks, media and deletions joined into one text,
# each as text: one value to read instead of a row per message, each repeating the
# conversation's timestamp and labels to parse. The latest messages are read with the
# conversation's id written in, so that the planner walks the (conversation, id) index.
CONVERSATION_STATE = f"""
    SELECT c.status, c.assignee_id, CAST(c.labels AS TEXT), c.unread,
           CAST(c.last_message_at AS TEXT), c.last_inbound_at > %s,
           (SELECT n.id FROM {Note._meta.db_table} n
             WHERE n.conversation_id = %s ORDER BY n.id DESC LIMIT 1),
           (SELECT {{joined}} FROM (
                SELECT m.id, m.status, f.state, m.deleted_at
                  FROM {Chat._meta.db_table} m
                  LEFT JOIN {ChatMedia._meta.db_table} f ON f.id = m.media_id
                 WHERE m.conversation_id = %s
                 ORDER BY m.id DESC
                 LIMIT {WATCHED_MESSAGES}
           ) latest)
      FROM {Conversation._meta.db_table} c
     WHERE c.id = %s AND (%s OR c.assignee_id IS NULL OR c.assignee_id = %s)
"""
MESSAGE_STATE = (
    "CAST(latest.id AS TEXT) || ' ' || latest.status || ' ' || COALESCE(latest.state, '')"
    " || ' ' || CAST(latest.deleted_at IS NULL AS TEXT)"
)
# PostgreSQL's string_agg in id order; SQLite's group_concat (string_agg from 3.44 only)
# takes the subquery's order.
CONVERSATION_STATES = {
    "postgresql": CONVERSATION_STATE.format(
        joined=f"string_agg({MESSAGE_STATE}, ',' ORDER BY latest.id)"
    ),
    "sqlite": CONVERSATION_STATE.format(joined=f"group_concat({MESSAGE_STATE}, ',')"),
}
# The organizations' live chats are indexed by (organization, id): one index entry; the
# count of changes is the organization's one row of ConversationTotal.
LIST_STATE = f"""
    SELECT (SELECT max(id) FROM {Chat._meta.db_table}
             WHERE organization_id = %s AND deleted_at IS NULL),
           (SELECT changes FROM {ConversationTotal._meta.db_table} WHERE organization_id = %s)
"""


def conversation_state(watch: Watch, conversation: int) -> tuple[Any, ...] | None:
    """One indexed query (CONVERSATION_STATE): the conversation's state and the ticks and
    media of its latest messages. An agent's watch finds only the unassigned or their
    own."""
    # The window closes with time alone: the composer changes then too.
    window_start = connection.ops.adapt_datetimefield_value(timezone.now() - SERVICE_WINDOW)
    with connection.cursor() as cursor:
        cursor.execute(
            CONVERSATION_STATES[connection.vendor],
            [window_start, conversation, conversation, conversation, not watch.agent, watch.user],
        )
        found = cursor.fetchone()
    return None if found is None else tuple(found)


def list_state(organization: int) -> tuple[Any, ...]:
    """One indexed query: the organization's newest message (a new message moves its
    conversation up the list and adds to its badge; message times have WhatsApp's
    one-second resolution, so the newest chat's id tells two messages apart instead),
    and its count of changes to conversations (another's assign, labels, resolve or
    read changes what the list shows too)."""
    with connection.cursor() as cursor:
        cursor.execute(LIST_STATE, [organization, organization])
        return tuple(cursor.fetchone())
