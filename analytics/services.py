"""The figures kept as messages change: listeners of the messages sending records
(sending/recorded.py), each appending a batch's increments in one statement in the
transaction of what it counts (analytics/queries.py), which the fold adds to the rollup
(analytics/folding.py). Statuses write nothing here: a chat a status moves keeps the
status the figures counted (Chat.counted_status), and the fold counts the change.

An outbound message counts on the UTC day it was created, at the status it has now: a
read one counts as sent, delivered and read; a failed one as failed only. A status moves
the figures only when it moves the chat, and the fold counts the chat's move from the
status counted to the status it has, so duplicates, statuses out of order and a `read`
before its `delivered` count exactly once.
"""

from collections import defaultdict
from datetime import UTC, date, datetime

from django.utils import timezone

from analytics.models import Awaiting, FirstResponse
from analytics.queries import (
    MESSAGE_COUNTERS,
    REACHED,
    add_staff_messages,
    append_counts,
    append_waits,
    await_staff,
    take_waits,
)
from sending.models import Chat, ChatStatus
from sending.recorded import ConversationsChanged, MessagesIn, MessagesOut

NOTHING = (0, 0, 0, 0)


def utc_day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def counters(*, outbound: int = 0, status: str = "", inbound: int = 0) -> list[int]:
    """MESSAGE_COUNTERS for one message: outbound, sent, delivered, read, failed, inbound."""
    return [outbound, *REACHED.get(status, NOTHING), inbound]


def minus(after: list[int], before: list[int]) -> list[int]:
    return [a - b for a, b in zip(after, before, strict=True)]


def key(chat: Chat) -> tuple[int, date, int]:
    return (chat.organization_id, utc_day(chat.created_at), chat.number_id)


def added(total: list[int], more: list[int]) -> list[int]:
    return [a + b for a, b in zip(total, more, strict=True)]


def on_messages_in(record: MessagesIn) -> None:
    deltas: dict[tuple[int, date, int], list[int]] = {}
    for chat in record.chats:
        deltas[key(chat)] = added(
            deltas.get(key(chat), [0] * len(MESSAGE_COUNTERS)), counters(inbound=1)
        )
    append_counts(deltas)


def on_messages_out(record: MessagesOut) -> None:
    deltas: dict[tuple[int, date, int], list[int]] = {}
    for chat in record.chats:
        deltas[key(chat)] = added(
            deltas.get(key(chat), [0] * len(MESSAGE_COUNTERS)),
            counters(outbound=1, status=chat.status),
        )
    append_counts(deltas)
    by_staff = [
        chat for chat in record.chats if chat.created_by and chat.status != ChatStatus.FAILED
    ]
    if by_staff:  # the inbox's sends: rare beside the API's and campaigns'
        record_staff_messages(by_staff)


def moved(before: str, after: str) -> tuple[int, ...]:
    """MESSAGE_COUNTERS' change for an outbound message moved from `before` to `after`."""
    return tuple(minus(counters(status=after), counters(status=before)))


def billable_category(pricing) -> str | None:
    """WhatsApp's pricing category of a status that says the message is billable."""
    if not isinstance(pricing, dict) or pricing.get("billable") is not True:
        return None
    category = pricing.get("category")
    return category[:64] if isinstance(category, str) and category else "unknown"


def on_conversations_changed(record: ConversationsChanged) -> None:
    """A conversation a customer's message opened (one made by an inbound message, not by
    a send or imported history) or reopened waits for staff's first answer from now."""
    now = timezone.now()
    opened = [c for c in record.created if c.unread > 0] + list(record.reopened)
    if opened:
        append_waits(opened, now)


def record_staff_messages(chats: list[Chat]) -> None:
    """Count staff's sends by day, and the first answer in each conversation waiting
    (its wait taken from the increments first when it is not folded yet)."""
    deltas: dict[tuple[int, date, int], int] = defaultdict(int)
    for chat in chats:
        deltas[(chat.organization_id, utc_day(chat.created_at), chat.created_by)] += 1
    add_staff_messages(deltas)
    answered_conversations = sorted({chat.conversation_id for chat in chats} - {None})
    if answered_conversations:
        await_staff(take_waits(answered_conversations))
    waiting = {
        awaiting.conversation_id: awaiting
        for awaiting in Awaiting.objects.filter(
            conversation_id__in=answered_conversations
        ).select_for_update()
    }
    answered: list[FirstResponse] = []
    for chat in chats:
        awaiting = waiting.pop(chat.conversation_id, None)
        if awaiting is None:
            continue
        answered.append(
            FirstResponse(
                organization_id=chat.organization_id,
                staff_id=chat.created_by,
                conversation_id=chat.conversation_id,
                answered_at=chat.created_at,
                seconds=max(0, round((chat.created_at - awaiting.since).total_seconds())),
            )
        )
    if answered:
        Awaiting.objects.filter(conversation_id__in=[r.conversation_id for r in answered]).delete()
        FirstResponse.objects.bulk_create(answered)
