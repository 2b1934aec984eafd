"""The figures kept as messages change: listeners of sending's recorded messages and
statuses (sending/recorded.py), each appending a batch's increments in one statement in
the transaction of what it counts (analytics/queries.py), which the fold adds to the
rollup (analytics/folding.py).

An outbound message counts on the UTC day it was created, at the status it has now: a
read one counts as sent, delivered and read; a failed one as failed only. A status moves
the figures only when it moves the chat (sending announces each move once, with the
status before and after), so duplicates, statuses out of order and a `read` before its
`delivered` count exactly once.
"""

from collections import defaultdict
from datetime import UTC, date, datetime

from django.utils import timezone

from analytics.models import Awaiting, FirstResponse
from analytics.queries import (
    MESSAGE_COUNTERS,
    add_staff_messages,
    append_billable,
    append_counts,
    append_waits,
    await_staff,
    take_waits,
)
from sending.models import Chat, ChatStatus, ChatType
from sending.recorded import (
    ConversationsChanged,
    MessagesIn,
    MessagesOut,
    StatusesMoved,
    StatusesRecorded,
)

# Which of (sent, delivered, read, failed) an outbound message in each status counts as.
REACHED: dict[str, tuple[int, int, int, int]] = {
    ChatStatus.SENT: (1, 0, 0, 0),
    ChatStatus.DELIVERED: (1, 1, 0, 0),
    ChatStatus.READ: (1, 1, 1, 0),
    ChatStatus.PLAYED: (1, 1, 1, 0),
    ChatStatus.FAILED: (0, 0, 0, 1),
}
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


# Each move's change worked out once: a status webhook adds it and nothing else.
MOVES: dict[tuple[str, str], tuple[int, ...]] = {
    (before, after): moved(before, after) for before in ChatStatus for after in ChatStatus
}


def on_statuses_moved(record: StatusesMoved) -> None:
    deltas: dict[tuple[int, date, int], list[int]] = {}
    for chat, before, after in record.moves:
        if chat.type != ChatType.OUTBOUND:
            continue
        change = MOVES.get((before, after)) or moved(before, after)
        found = key(chat)
        total = deltas.get(found)
        deltas[found] = list(change) if total is None else added(total, list(change))
    append_counts(deltas)


def billable_category(pricing) -> str | None:
    """WhatsApp's pricing category of a status that says the message is billable."""
    if not isinstance(pricing, dict) or pricing.get("billable") is not True:
        return None
    category = pricing.get("category")
    return category[:64] if isinstance(category, str) and category else "unknown"


def on_statuses_recorded(record: StatusesRecorded) -> None:
    """Billable messages: WhatsApp repeats the pricing on every status, and the fold
    counts each message once."""
    billable: dict[int, tuple[str, tuple[int, date, int]]] = {}
    for update in record.updates:
        category = billable_category(update.pricing)
        chat = record.chats.get(update.wam_id)
        if category is None or chat is None or chat.type != ChatType.OUTBOUND:
            continue
        billable.setdefault(chat.pk, (category, key(chat)))
    append_billable(billable)


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
