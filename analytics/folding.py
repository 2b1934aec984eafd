"""The increments the listeners append (analytics/services.py) added to the rollup: by
the worker once a minute (analytics/tasks.py), and for one organization just before its
figures are read, so that a read counts everything committed before it.

Exactly once: the fold deletes the increments it takes in the transaction that adds
them to the rollup (queries.take_increments), so two folds at once (two workers, a
worker and a read) take each increment once between them, and a fold that fails adds
nothing and takes nothing.
"""

from collections import defaultdict
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
    take_increments,
)
from business_numbers.models import Number
from sending.models import Chat, Conversation

# Increments taken per transaction: a minute of a busy number's statuses in a few.
BATCH = 5000
# A day as the database returned it (SQLite's raw cursor gives the ISO text).
DAY = Increment._meta.get_field("day")


def fold(organization_id: int | None = None) -> int:
    """Add every increment (of one organization, or all) to the rollup; how many."""
    folded = 0
    while True:
        # Inside a caller's transaction, in it: a failure fails the caller's too.
        with transaction.atomic(savepoint=False):
            if connection.vendor == "postgresql":
                taken = fold_batch(organization_id, BATCH)
            else:
                rows = take_increments(organization_id, BATCH)
                add_to_rollup(rows)
                taken = len(rows)
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
