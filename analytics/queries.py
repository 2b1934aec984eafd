"""The rollup's hand-written SQL: each batch's increments in one upsert statement (the
ORM's upsert can only set columns to the values offered, not add to them), run at the
end of the event batch (events.services.at_batch_end), and the billable messages claimed
once and counted in one more. Runs on PostgreSQL and SQLite alike; on PostgreSQL a
billing is a single statement."""

import os
import threading
from collections.abc import Iterable
from datetime import date
from functools import lru_cache

from django.db import connection

from analytics.models import (
    SLOTS,
    Awaiting,
    BilledMessage,
    DailyBillable,
    DailyMessages,
    DailyStaffMessages,
)
from events.services import at_batch_end

MESSAGE_COUNTERS = ("outbound", "sent", "delivered", "read", "failed", "inbound")
Names = tuple[str, ...]  # a table's columns


_slots = threading.local()


def slot() -> int:
    """This process and thread's slot of the day's rows: concurrent transactions add to
    different rows instead of queueing on one. Worked out once per thread."""
    mine = getattr(_slots, "slot", None)
    if mine is None:
        mine = _slots.slot = hash((os.getpid(), threading.get_ident())) % SLOTS
    return mine


@lru_cache(maxsize=256)
def upsert_sql(table: str, keys: Names, counters: Names, count: int) -> str:
    """The statement of add() for `count` rows, written once: building it for each batch
    cost more of the webhook's CPU than PostgreSQL took to run it."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in (*keys, *counters))
    one = "(" + ", ".join(["%s"] * (len(keys) + len(counters))) + ")"
    increments = ", ".join(
        f"{quote(name)} = {table}.{quote(name)} + excluded.{quote(name)}" for name in counters
    )
    return (
        f"INSERT INTO {table} ({columns}) VALUES {', '.join([one] * count)} "  # noqa: S608
        f"ON CONFLICT ({', '.join(quote(k) for k in keys)}) DO UPDATE SET {increments}"
    )


def add(table: str, keys: Names, counters: Names, rows: Iterable[tuple]) -> None:
    """INSERT ... ON CONFLICT (keys) DO UPDATE SET counter = counter + excluded.counter,
    for `rows` of (keys..., counters...), in key order (concurrent batches lock the rows
    they share in one order)."""
    ordered = sorted(rows)
    if not ordered:
        return
    sql = upsert_sql(table, keys, counters, len(ordered))
    # At the end of the recording transaction's event batch: the slot's row is locked for
    # the commit only, and the statement shares a round trip with the batch's others.
    at_batch_end(sql, [value for row in ordered for value in row])


def add_messages(deltas: dict[tuple[int, date, int], list[int]]) -> None:
    """Add to DailyMessages: `deltas` by (organization, day, number), MESSAGE_COUNTERS'
    increments each."""
    mine = slot()
    add(
        DailyMessages._meta.db_table,
        ("organization_id", "day", "number_id", "slot"),
        MESSAGE_COUNTERS,
        (
            (organization, day, number, mine, *counts)
            for (organization, day, number), counts in deltas.items()
            if any(counts)
        ),
    )


def add_billable(deltas: dict[tuple[int, date, int, str], int]) -> None:
    """Add to DailyBillable: `deltas` by (organization, day, number, category)."""
    mine = slot()
    add(
        DailyBillable._meta.db_table,
        ("organization_id", "day", "number_id", "category", "slot"),
        ("messages",),
        ((*key, mine, count) for key, count in deltas.items() if count),
    )


def add_staff_messages(deltas: dict[tuple[int, date, int], int]) -> None:
    """Add to DailyStaffMessages: `deltas` by (organization, day, staff member)."""
    add(
        DailyStaffMessages._meta.db_table,
        ("organization_id", "day", "staff_id"),
        ("messages",),
        ((*key, count) for key, count in deltas.items() if count),
    )


def bill(billable: dict[int, tuple[str, tuple[int, date, int]]]) -> None:
    """Record the billable messages of `billable` (chat id: pricing category and the
    chat's (organization, day, number)) and count in DailyBillable the ones recorded
    now: a chat billed before (its earlier status's pricing, or a concurrent delivery's)
    counts no more. One statement on PostgreSQL (the status webhook's hot path), run at
    the end of the event batch with the rollup's, two elsewhere."""
    if not billable:
        return
    if connection.vendor == "postgresql":
        bill_in_one_statement(billable)
        return
    deltas: dict[tuple[int, date, int, str], int] = {}
    for chat_id in claim_billed({chat_id: category for chat_id, (category, _) in billable.items()}):
        category, (organization, day, number) = billable[chat_id]
        found = (organization, day, number, category)
        deltas[found] = deltas.get(found, 0) + 1
    add_billable(deltas)


def bill_in_one_statement(billable: dict[int, tuple[str, tuple[int, date, int]]]) -> None:
    """bill() as one data-modifying WITH: the claims inserted, and the rows claimed now
    counted by day, number and category."""
    offered = sorted(
        (chat_id, category, organization, day, number)
        for chat_id, (category, (organization, day, number)) in billable.items()
    )
    # Nothing to read back: it waits for the batch's end with the rollup's upsert, and
    # shares its round trip.
    at_batch_end(billing_sql(len(offered)), [value for row in offered for value in row] + [slot()])


@lru_cache(maxsize=256)
def billing_sql(count: int) -> str:
    """bill_in_one_statement's statement for `count` messages, written once."""
    table, claims = DailyBillable._meta.db_table, BilledMessage._meta.db_table
    return (
        "WITH offered (chat_id, category, organization_id, day, number_id) AS (VALUES "  # noqa: S608
        f"{', '.join(['(%s, %s, %s, %s::date, %s)'] * count)}), "
        f"claimed AS (INSERT INTO {claims} (chat_id, category) "
        "SELECT chat_id, category FROM offered ORDER BY chat_id "
        "ON CONFLICT (chat_id) DO NOTHING RETURNING chat_id) "
        f"INSERT INTO {table} (organization_id, day, number_id, category, slot, messages) "
        "SELECT organization_id, day, number_id, category, %s, count(*) "
        "FROM claimed JOIN offered USING (chat_id) "
        "GROUP BY organization_id, day, number_id, category "
        "ORDER BY organization_id, day, number_id, category "
        "ON CONFLICT (organization_id, day, number_id, category, slot) "
        f"DO UPDATE SET messages = {table}.messages + excluded.messages"
    )


def claim_billed(categories: dict[int, str]) -> set[int]:
    """Record the billable messages of `categories` (chat id: pricing category) and return
    the chats recorded now: a chat counted before (its earlier status's pricing, or a
    concurrent delivery's) is not returned again."""
    if not categories:
        return set()
    table = BilledMessage._meta.db_table
    items = sorted(categories.items())
    sql = (
        f"INSERT INTO {table} (chat_id, category) VALUES "  # noqa: S608
        f"{', '.join(['(%s, %s)'] * len(items))} ON CONFLICT (chat_id) DO NOTHING RETURNING chat_id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for item in items for value in item])
        return {row[0] for row in cursor.fetchall()}


def await_staff(conversation_ids: list[int], since) -> None:
    """The conversations wait for staff's first answer from `since` (a customer's message
    opened or reopened them), at the end of the event batch with the rollup's upsert."""
    table = Awaiting._meta.db_table
    value = Awaiting._meta.get_field("since").get_db_prep_value(since, connection, prepared=False)
    ids = sorted(set(conversation_ids))
    sql = (
        f"INSERT INTO {table} (conversation_id, since) VALUES "  # noqa: S608
        f"{', '.join(['(%s, %s)'] * len(ids))} "
        "ON CONFLICT (conversation_id) DO UPDATE SET since = excluded.since"
    )
    at_batch_end(sql, [item for pk in ids for item in (pk, value)])
