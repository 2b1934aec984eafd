"""The rollup's hand-written SQL: the increments appended by the recorded-message
listeners in one insert at the end of the event batch (events.services.at_batch_end),
taken back by the fold, and the fold's upserts (the ORM's upsert can only set columns
to the values offered, not add to them). Runs on PostgreSQL and SQLite alike, but for
the fold's single statement, PostgreSQL's (fold_sql)."""

from collections.abc import Iterable
from datetime import UTC, date, datetime
from functools import lru_cache

from django.db import connection

from analytics.models import (
    Awaiting,
    BilledMessage,
    DailyBillable,
    DailyMessages,
    DailyStaffMessages,
    Increment,
)
from business_numbers.models import Number
from events.services import at_batch_end
from messaging_project.core.database import Statement, execute_together, fetch_together
from sending.models import (
    Chat,
    ChatStatus,
    ChatStatusEvent,
    ChatType,
    Conversation,
    MovedChat,
)

MESSAGE_COUNTERS = ("outbound", "sent", "delivered", "read", "failed", "inbound")
# Which of (sent, delivered, read, failed) an outbound message in each status counts as.
REACHED: dict[str, tuple[int, int, int, int]] = {
    ChatStatus.SENT: (1, 0, 0, 0),
    ChatStatus.DELIVERED: (1, 1, 0, 0),
    ChatStatus.READ: (1, 1, 1, 0),
    ChatStatus.PLAYED: (1, 1, 1, 0),
    ChatStatus.FAILED: (0, 0, 0, 1),
}
STATUS_COUNTERS = MESSAGE_COUNTERS[1:5]
Names = tuple[str, ...]  # a table's columns
MessageKey = tuple[int, date, int]  # organization, day, number

COUNTED = ("organization_id", "day", "number_id", *MESSAGE_COUNTERS)
WAITING = ("organization_id", "day", "number_id", "conversation_id", "waiting_since")
TAKEN = ("id", *COUNTED, "chat_id", "category", "conversation_id", "waiting_since")


@lru_cache(maxsize=256)
def insert_sql(table: str, columns: Names, count: int) -> str:
    """INSERT of `count` rows of `columns`, written once: building it for each batch
    cost more of the webhook's CPU than PostgreSQL took to run it."""
    quote = connection.ops.quote_name
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    return (
        f"INSERT INTO {table} ({', '.join(quote(name) for name in columns)}) "  # noqa: S608
        f"VALUES {', '.join([one] * count)}"
    )


@lru_cache(maxsize=256)
def upsert_sql(table: str, keys: Names, counters: Names, count: int) -> str:
    """insert_sql, adding the counters to a row of the same keys (add())."""
    quote = connection.ops.quote_name
    increments = ", ".join(
        f"{quote(name)} = {table}.{quote(name)} + excluded.{quote(name)}" for name in counters
    )
    return (
        f"{insert_sql(table, (*keys, *counters), count)} "
        f"ON CONFLICT ({', '.join(quote(k) for k in keys)}) DO UPDATE SET {increments}"
    )


def append(columns: Names, rows: list[tuple]) -> None:
    """Append increments (`rows` of `columns`) at the end of the recording transaction's
    event batch, in the round trip of its other statements and its commit."""
    if rows:
        sql = insert_sql(Increment._meta.db_table, columns, len(rows))
        at_batch_end(sql, [value for row in rows for value in row])


def append_counts(deltas: dict[MessageKey, list[int]]) -> None:
    """Increments of MESSAGE_COUNTERS, by (organization, day, number)."""
    append(COUNTED, [(*key, *counts) for key, counts in deltas.items() if any(counts)])


def append_waits(conversations: list, since: datetime) -> None:
    """Conversations (of sending.models.Conversation) waiting for staff's first answer
    from `since`: a customer's message opened or reopened them."""
    day = since.astimezone(UTC).date()
    value = connection.ops.adapt_datetimefield_value(since)
    append(WAITING, [(c.organization_id, day, c.number_id, c.pk, value) for c in conversations])


def take_increments(organization_id: int | None, limit: int) -> list[tuple]:
    """Delete up to `limit` of the oldest increments (of one organization, or all) and
    return them as TAKEN: a concurrent take waits for the rows this one deleted and
    finds them gone, so each increment is taken once, by the transaction that adds it
    to the rollup."""
    with connection.cursor() as cursor:
        cursor.execute(taken_sql(organization_id is not None), scoped(organization_id, limit))
        return cursor.fetchall()


def scoped(organization_id: int | None, limit: int) -> list:
    """taken_sql's parameters."""
    return [limit] if organization_id is None else [organization_id, limit]


def taken_sql(one_organization: bool) -> str:
    """take_increments' DELETE ... RETURNING TAKEN: of one organization (the first
    parameter) or all, up to a limit (the last)."""
    table, quote = Increment._meta.db_table, connection.ops.quote_name
    scope = "WHERE organization_id = %s " if one_organization else ""
    # Locked in id order (PostgreSQL): two folds at once wait for each other's rows in
    # one order, never in a circle. The rows another fold took meanwhile are skipped and
    # the LIMIT counts only the rows locked, so nothing comes back only when nothing is
    # left: a read's fold is complete even when the worker's took its first rows.
    lock = " FOR UPDATE" if connection.vendor == "postgresql" else ""
    return (
        f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} {scope}"  # noqa: S608
        f"ORDER BY id LIMIT %s{lock}) RETURNING {', '.join(quote(name) for name in TAKEN)}"
    )


@lru_cache(maxsize=1)
def claims_sql() -> str:
    """The folds' last two CTEs: the messages of `priced` (chat_id, category) claimed as
    billed, those claimed now counted by category on their chat's day and number. The
    day and number come from the chat, by its primary key for each: joining the claims
    back to the priced rows (two CTEs, whose sizes PostgreSQL cannot estimate) was
    planned as a nested loop, each claim against every row."""
    chat, billable = Chat._meta.db_table, DailyBillable._meta.db_table
    return f"""claimed AS (
            INSERT INTO {BilledMessage._meta.db_table} (chat_id, category)
            SELECT chat_id, category FROM priced ORDER BY chat_id
            ON CONFLICT (chat_id) DO NOTHING RETURNING chat_id, category
        ),
        billed AS (
            INSERT INTO {billable} (organization_id, day, number_id, category, messages)
            SELECT chat.organization_id, (chat.created_at AT TIME ZONE 'UTC')::date,
                chat.number_id, claimed.category, count(*)
            FROM claimed JOIN {chat} chat ON chat.id = claimed.chat_id
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            ON CONFLICT (organization_id, day, number_id, category)
            DO UPDATE SET messages = {billable}.messages + excluded.messages
        )"""  # noqa: S608


@lru_cache(maxsize=2)
def fold_sql(one_organization: bool) -> str:
    """The fold of up to a batch of increments as one statement (PostgreSQL): taken,
    those of numbers and chats still there added up by day and number, the billable
    messages claimed and those claimed now counted by category, each conversation's
    latest wait kept; how many were taken. A message billed twice in the batch is
    claimed with its first category, as add_to_rollup does. Every part of a WITH runs
    once, on one snapshot."""
    taken = taken_sql(one_organization)
    counters = ", ".join(f"sum({name})" for name in MESSAGE_COUNTERS)
    added = " OR ".join(f"sum({name}) <> 0" for name in MESSAGE_COUNTERS)
    increments = ", ".join(
        f"{name} = {DailyMessages._meta.db_table}.{name} + excluded.{name}"
        for name in MESSAGE_COUNTERS
    )
    number, chat = Number._meta.db_table, Chat._meta.db_table
    conversation, awaiting = Conversation._meta.db_table, Awaiting._meta.db_table
    return f"""
        WITH taken AS ({taken}),
        live AS (
            SELECT taken.* FROM taken JOIN {number} number ON number.id = taken.number_id
        ),
        counted AS (
            INSERT INTO {DailyMessages._meta.db_table}
                (organization_id, day, number_id, {", ".join(MESSAGE_COUNTERS)})
            SELECT organization_id, day, number_id, {counters} FROM live
            GROUP BY organization_id, day, number_id HAVING {added}
            ORDER BY organization_id, day, number_id
            ON CONFLICT (organization_id, day, number_id) DO UPDATE SET {increments}
        ),
        priced AS (
            SELECT DISTINCT ON (live.chat_id)
                live.chat_id, live.category, live.organization_id, live.day, live.number_id
            FROM live JOIN {chat} chat ON chat.id = live.chat_id
            ORDER BY live.chat_id, live.id
        ),
        {claims_sql()},
        waiting AS (
            INSERT INTO {awaiting} (conversation_id, since)
            SELECT DISTINCT ON (live.conversation_id) live.conversation_id, live.waiting_since
            FROM live JOIN {conversation} conversation ON conversation.id = live.conversation_id
            ORDER BY live.conversation_id, live.id DESC
            ON CONFLICT (conversation_id) DO UPDATE SET since = excluded.since
        )
        SELECT count(*) FROM taken
    """  # noqa: S608


# The advisory lock the folds take shared and a repair exclusive (PostgreSQL): a
# repair adds to the rollup with no fold adding meanwhile (analytics/rebuild.py).
FOLDS_LOCK = (41_001, 1)


# A fold's batch on PostgreSQL waits while a repair writes, in its statement's round
# trip (SQLite runs one write transaction at a time).
LET_FOLDS_RUN = ("SELECT pg_advisory_xact_lock_shared(%s, %s)", list(FOLDS_LOCK))


def fold_batch(organization_id: int | None, limit: int) -> int:
    """Up to `limit` of the oldest increments (of one organization, or all) added to the
    rollup in one statement (fold_sql); how many were taken."""
    statement = (fold_sql(organization_id is not None), scoped(organization_id, limit))
    return fetch_together([LET_FOLDS_RUN, statement])[-1][0][0]


def reaching(counter: str, column: str) -> str:
    """SQL: 1 when a message in the status of `column` counts as `counter`, else 0."""
    place = STATUS_COUNTERS.index(counter)
    listed = ", ".join(f"'{status}'" for status, reached in REACHED.items() if reached[place])
    return f"({column} IN ({listed}))::int"


def moves_sql(one_organization: bool) -> str:
    """MOVES_SQL: the chats up to a limit (of one organization, the first parameter, or
    all) that moved since the figures counted them."""
    scope = "WHERE mark.organization_id = %s " if one_organization else ""
    return MOVES_SQL.format(chat=Chat._meta.db_table, marks=MovedChat._meta.db_table, scope=scope)


# The chats marked as moved since counted (MovedChat), oldest first, locked; one another
# transaction holds (a status webhook moving it, another fold) is left for the next
# fold: a fold never waits, so it is never in a deadlock.
MOVES_SQL = """
    SELECT chat.id, chat.counted_status FROM {marks} mark JOIN {chat} chat ON chat.id = mark.chat_id
    {scope}ORDER BY mark.chat_id LIMIT %s FOR UPDATE OF chat SKIP LOCKED
"""


@lru_cache(maxsize=2)
def fold_moves_sql(one_organization: bool) -> str:
    """The fold of up to a batch of moved chats as one statement (PostgreSQL): each
    chat's mark cleared, the change from the status counted to the status it has added
    to its day (an outbound chat's), and the billable messages claimed, each at the
    pricing of its first billable status, and counted by category; how many were taken.
    As folding.fold_moves does in Python elsewhere."""
    chat, event = Chat._meta.db_table, ChatStatusEvent._meta.db_table
    daily, marks = DailyMessages._meta.db_table, MovedChat._meta.db_table
    changes = ", ".join(
        f"{reaching(name, 'after')} - {reaching(name, 'before')} AS {name}"
        for name in STATUS_COUNTERS
    )
    sums = ", ".join(f"sum({name})" for name in STATUS_COUNTERS)
    added = " OR ".join(f"sum({name}) <> 0" for name in STATUS_COUNTERS)
    increments = ", ".join(f"{name} = {daily}.{name} + excluded.{name}" for name in STATUS_COUNTERS)
    return f"""
        WITH picked AS ({moves_sql(one_organization)}),
        unmarked AS (DELETE FROM {marks} mark USING picked WHERE mark.chat_id = picked.id),
        moved AS (
            UPDATE {chat} chat SET counted_status = NULL FROM picked
            WHERE chat.id = picked.id AND picked.counted_status IS NOT NULL
            RETURNING chat.id, chat.organization_id, chat.number_id, chat.type,
                (chat.created_at AT TIME ZONE 'UTC')::date AS day,
                picked.counted_status AS before, chat.status AS after
        ),
        outbound AS (SELECT * FROM moved WHERE type = '{ChatType.OUTBOUND}'),
        changes AS (
            SELECT organization_id, day, number_id, {changes} FROM outbound
        ),
        counted AS (
            INSERT INTO {daily}
                (organization_id, day, number_id, {", ".join(MESSAGE_COUNTERS)})
            SELECT organization_id, day, number_id, 0, {sums}, 0 FROM changes
            GROUP BY organization_id, day, number_id HAVING {added}
            ORDER BY organization_id, day, number_id
            ON CONFLICT (organization_id, day, number_id) DO UPDATE SET {increments}
        ),
        priced AS (
            SELECT DISTINCT ON (outbound.id)
                outbound.id AS chat_id,
                CASE WHEN jsonb_typeof(event.pricing -> 'category') = 'string'
                          AND event.pricing ->> 'category' <> ''
                     THEN left(event.pricing ->> 'category', 64) ELSE 'unknown' END AS category
            FROM outbound JOIN {event} event ON event.chat_id = outbound.id
            WHERE event.pricing -> 'billable' = 'true'::jsonb
            ORDER BY outbound.id, event.timestamp, event.id
        ),
        {claims_sql()}
        SELECT count(*) FROM moved
    """  # noqa: S608


def fold_moves_batch(organization_id: int | None, limit: int) -> int:
    """Up to `limit` moved chats (of one organization, or all) counted in the rollup in
    one statement (fold_moves_sql); how many were taken."""
    statement = (fold_moves_sql(organization_id is not None), scoped(organization_id, limit))
    return fetch_together([LET_FOLDS_RUN, statement])[-1][0][0]


def take_moves(organization_id: int | None, limit: int) -> list[tuple]:
    """Elsewhere than PostgreSQL: up to `limit` moved chats (of one organization, or all)
    as (id, organization, number, type, created_at, status counted, status now), their
    marks cleared. Inside the caller's transaction, which holds the database's write lock
    from its start (SQLite's IMMEDIATE transactions): nothing moves them meanwhile."""
    marks = MovedChat.objects.all()
    if organization_id is not None:
        marks = marks.filter(organization_id=organization_id)
    marked = list(marks.order_by("chat_id").values_list("chat_id", flat=True)[:limit])
    if not marked:
        return []
    taken = list(
        Chat._base_manager.filter(pk__in=marked, counted_status__isnull=False)
        .order_by("id")
        .values_list(
            "id", "organization_id", "number_id", "type", "created_at", "counted_status", "status"
        )
    )
    MovedChat.objects.filter(chat_id__in=marked).delete()
    Chat._base_manager.filter(pk__in=[row[0] for row in taken]).update(counted_status=None)
    return taken


def upsert(table: str, keys: Names, counters: Names, rows: Iterable[tuple]) -> Statement | None:
    """INSERT ... ON CONFLICT (keys) DO UPDATE SET counter = counter + excluded.counter,
    for `rows` of (keys..., counters...), in key order (concurrent transactions lock the
    rows they share in one order); None without rows."""
    ordered = sorted(rows)
    if not ordered:
        return None
    sql = upsert_sql(table, keys, counters, len(ordered))
    return sql, [value for row in ordered for value in row]


def hold_off_folds() -> None:
    """Until the transaction ends, no fold adds to the rollup: PostgreSQL's wait for the
    lock they take shared; on SQLite this write takes the database's one write lock."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", FOLDS_LOCK)
        else:
            table = DailyMessages._meta.db_table
            cursor.execute(f"UPDATE {table} SET id = id WHERE 0 = 1")  # noqa: S608


def add_messages(deltas: dict[MessageKey, list[int]]) -> None:
    """Add to DailyMessages: `deltas` by (organization, day, number)."""
    statement = upsert(
        DailyMessages._meta.db_table,
        ("organization_id", "day", "number_id"),
        MESSAGE_COUNTERS,
        ((*key, *counts) for key, counts in deltas.items() if any(counts)),
    )
    if statement:
        execute_together([statement])


def add_billable(deltas: dict[tuple[int, date, int, str], int]) -> None:
    """Add to DailyBillable: `deltas` by (organization, day, number, category)."""
    statement = upsert(
        DailyBillable._meta.db_table,
        ("organization_id", "day", "number_id", "category"),
        ("messages",),
        ((*key, count) for key, count in deltas.items() if count),
    )
    if statement:
        execute_together([statement])


def add_staff_messages(deltas: dict[tuple[int, date, int], int]) -> None:
    """Add to DailyStaffMessages: `deltas` by (organization, day, staff member), at the
    end of the event batch (the inbox's sends: rare beside the API's)."""
    statement = upsert(
        DailyStaffMessages._meta.db_table,
        ("organization_id", "day", "staff_id"),
        ("messages",),
        ((*key, count) for key, count in deltas.items() if count),
    )
    if statement:
        at_batch_end(*statement)


def claim_billed(categories: dict[int, str]) -> set[int]:
    """Record the billable messages of `categories` (chat id: pricing category) and return
    the chats recorded now: a chat counted before (its earlier status's pricing, or a
    concurrent fold's) is not returned again."""
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


def take_waits(conversation_ids: list[int]) -> dict[int, object]:
    """Delete the waits of these conversations not folded yet and return the latest of
    each (its time as the database returned it), locked in id order as a fold locks."""
    table = Increment._meta.db_table
    lock = " FOR UPDATE" if connection.vendor == "postgresql" else ""
    sql = (
        f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} "  # noqa: S608
        f"WHERE conversation_id IN ({', '.join(['%s'] * len(conversation_ids))}) "
        f"ORDER BY id{lock}) RETURNING id, conversation_id, waiting_since"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, conversation_ids)
        return {conversation: since for _, conversation, since in sorted(cursor.fetchall())}


def await_staff(waits: dict[int, object]) -> None:
    """Awaiting rows: each conversation of `waits` waits for staff from its time (as the
    database returned it), the latest wait of a conversation replacing an older one."""
    if not waits:
        return
    table = Awaiting._meta.db_table
    ids = sorted(waits)
    sql = (
        f"INSERT INTO {table} (conversation_id, since) VALUES "  # noqa: S608
        f"{', '.join(['(%s, %s)'] * len(ids))} "
        "ON CONFLICT (conversation_id) DO UPDATE SET since = excluded.since"
    )
    execute_together([(sql, [item for pk in ids for item in (pk, waits[pk])])])
