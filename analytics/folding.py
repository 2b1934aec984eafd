"""The figures' changes not counted yet, added to the rollup: the increments the
listeners append (analytics/services.py), and the chats that moved since counted
(sending's Chat.counted_status). By the worker once a minute (analytics/tasks.py), and
for one organization just before its figures are read.

Exactly once: the fold deletes the increments it takes, and clears the marks of the
chats it counts, in the transaction that adds them to the rollup (queries.take_increments,
queries.fold_moves_sql), so two folds at once (two workers, a worker and a read) take
each once between them, and a fold that fails adds nothing and takes nothing. A chat
another transaction holds is left for the next fold (and counted by a read meanwhile:
analytics/selectors.py), so a fold never waits for a status webhook.
"""

from collections import defaultdict
from collections.abc import Callable
from datetime import date

from django.db import connection, transaction

from analytics.models import Increment
from analytics.queries import (
    MESSAGE_COUNTERS,
    MessageKey,
    add_billable,
    add_messages,
    await_staff,
    claim_billed,
    fold_batch,
    fold_moves_batch,
    take_increments,
    take_moves,
)
from analytics.services import added, billable_category, moved, utc_day
from business_numbers.models import Number
from sending.models import Chat, ChatStatusEvent, ChatType, Conversation

# Increments taken per transaction: a minute of a busy number's statuses in a few.
BATCH = 5000
# A day as the database returned it (SQLite's raw cursor gives the ISO text).
DAY = Increment._meta.get_field("day")


def fold(organization_id: int | None = None) -> int:
    """Add every increment and every moved chat (of one organization, or all) to the
    rollup; how many."""
    return fold_increments(organization_id) + fold_moves(organization_id)


def fold_increments(organization_id: int | None) -> int:
    def elsewhere() -> int:
        rows = take_increments(organization_id, BATCH)
        add_to_rollup(rows)
        return len(rows)

    return in_batches(lambda: fold_batch(organization_id, BATCH), elsewhere)


def in_batches(on_postgresql: Callable[[], int], elsewhere: Callable[[], int]) -> int:
    """Fold a batch at a time, each in a transaction of its own, until one takes
    nothing; how many were taken. `on_postgresql` folds a batch in one statement,
    `elsewhere` in Python; each returns how many it took."""
    folded = 0
    while True:
        # Inside a caller's transaction, in it: a failure fails the caller's too.
        with transaction.atomic(savepoint=False):
            taken = on_postgresql() if connection.vendor == "postgresql" else elsewhere()
        if not taken:
            return folded
        folded += taken


def add_to_rollup(taken: list[tuple]) -> None:
    """Add increments (queries.TAKEN) to DailyMessages, DailyBillable and Awaiting, as
    queries.fold_sql does in one statement on PostgreSQL: each billable message counted
    on its first claim only, each conversation's latest wait kept. The increments of
    numbers, chats and conversations deleted since they were appended are dropped with
    them."""
    if not taken:
        return
    numbers = set(
        Number._base_manager.filter(pk__in={row[3] for row in taken}).values_list("pk", flat=True)
    )
    counts: dict[MessageKey, list[int]] = {}
    billable: dict[int, tuple[str, MessageKey]] = {}
    waits: dict[int, object] = {}
    width = len(MESSAGE_COUNTERS)
    for _, organization, day, number, *rest in sorted(taken):  # in the order appended
        if number not in numbers:
            continue
        key = (organization, DAY.to_python(day), number)
        changes, (chat_id, category, conversation_id, since) = rest[:width], rest[width:]
        if any(changes):
            total = counts.setdefault(key, [0] * width)
            counts[key] = [a + b for a, b in zip(total, changes, strict=True)]
        if chat_id is not None:
            billable.setdefault(chat_id, (category, key))
        if conversation_id is not None:
            waits[conversation_id] = since
    if billable:
        chats = Chat._base_manager.filter(pk__in=list(billable)).values_list("pk", flat=True)
        claimed = claim_billed({chat_id: billable[chat_id][0] for chat_id in chats})
        by_category: dict[tuple[int, date, int, str], int] = defaultdict(int)
        for chat_id in claimed:
            category, key = billable[chat_id]
            by_category[(*key, category)] += 1
        add_billable(by_category)
    add_messages(counts)
    if waits:
        found = Conversation._base_manager.filter(pk__in=list(waits)).values_list("pk", flat=True)
        await_staff({conversation_id: waits[conversation_id] for conversation_id in found})


def fold_moves(organization_id: int | None) -> int:
    """Count the chats that moved since counted (of one organization, or all): each
    outbound one's change from the status counted to the status it has, and its billable
    pricing claimed; how many."""

    def elsewhere() -> int:
        rows = take_moves(organization_id, BATCH)
        count_moves(rows)
        return len(rows)

    return in_batches(lambda: fold_moves_batch(organization_id, BATCH), elsewhere)


def count_moves(taken: list[tuple]) -> None:
    """Add moved chats (queries.take_moves) to DailyMessages and DailyBillable, as
    queries.fold_moves_sql does in one statement on PostgreSQL."""
    counts: dict[MessageKey, list[int]] = {}
    outbound: dict[int, MessageKey] = {}
    for chat_id, organization, number, kind, created_at, before, after in taken:
        if kind != ChatType.OUTBOUND:
            continue
        key = outbound[chat_id] = (organization, utc_day(created_at), number)
        change = list(moved(before, after))
        if any(change):
            counts[key] = added(counts.get(key, [0] * len(MESSAGE_COUNTERS)), change)
    add_messages(counts)
    first_priced = first_billable(list(outbound))
    by_category: dict[tuple[int, date, int, str], int] = defaultdict(int)
    for chat_id in claim_billed(first_priced):
        by_category[(*outbound[chat_id], first_priced[chat_id])] += 1
    add_billable(by_category)


def first_billable(chat_ids: list[int]) -> dict[int, str]:
    """The pricing category of each chat's first billable status (by its time), for the
    chats that have one: what a move claims (WhatsApp repeats it on each status)."""
    first: dict[int, str] = {}
    priced = (
        ChatStatusEvent.objects.filter(chat_id__in=chat_ids, pricing__billable=True)
        .order_by("timestamp", "id")
        .values_list("chat_id", "pricing")
    )
    for chat_id, pricing in priced:
        category = billable_category(pricing)
        if category is not None:
            first.setdefault(chat_id, category)
    return first
