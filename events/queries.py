"""The events app's hand-written SQL: the endpoints an emission looks up, the emissions'
insert (the outbox), their fan-out into deliveries, and the deliveries' claim. Each
statement says what earns it its place beside the ORM; every one runs on PostgreSQL in
the suite (tests/events/)."""

from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from events.models import Delivery, DeliveryStatus, Emission, Endpoint
from messaging_project.core.database import column_types, execute_together, insert_statements

# The endpoints that may want an event (every emission asks, usually to learn that
# nobody listens).
# Earns 12-15% of the inbound webhook's CPU over the ORM, measured in-process on PostgreSQL.
LISTENING_SQL = (
    "SELECT id, events, format FROM {table} "
    "WHERE organization_id = %s AND is_active AND deleted_at IS NULL ORDER BY id"
)
# An endpoint as an emission names it: its id, a bigint, so 1 to 18 digits (anything
# else is passed over, so that no row can stop the fan-out of every row behind it).
ENDPOINT_ID = "[0-9]{1,18}"
# On SQLite, the oldest emissions, taken by one statement that removes them (PostgreSQL
# does the whole fan-out in FAN_OUT_SQL below, its rows picked with SKIP LOCKED): their
# deliveries are written in the same transaction, so a worker dying midway leaves them
# to the next. The ORM cannot say it: a DELETE ... RETURNING.
TAKE_EMISSIONS_SQL = """
WITH picked AS MATERIALIZED (SELECT id FROM {table} ORDER BY id LIMIT %s)
DELETE FROM {table} WHERE id IN (SELECT id FROM picked)
RETURNING id, endpoints, event, body, created_at
"""
# On PostgreSQL the whole fan-out in one statement: the oldest emissions taken (rows
# another worker holds passed over) and removed, a pending delivery written for each
# endpoint each one names that still has its row (in the emissions' order, then the order
# they name them; names that are not an ENDPOINT_ID passed over), and how many were
# taken. Earns about a tenth of the worker's CPU a delivered event over taking the
# emissions and inserting their deliveries (the bodies read into the worker and sent
# back, a msg_id made in Python for each), measured with 10,000 events to one endpoint.
# The ORM cannot say it: data-modifying CTEs, and the msg_id (new_message_id's shape)
# made by PostgreSQL.
FAN_OUT_SQL = """
WITH picked AS MATERIALIZED (
    SELECT id FROM {emissions} ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
),
taken AS (
    DELETE FROM {emissions} WHERE id IN (SELECT id FROM picked)
    RETURNING id, endpoints, event, body, created_at
),
written AS (
    INSERT INTO {deliveries} (organization_id, endpoint_id, msg_id, event, body, status,
        attempts, last_error, created_at, updated_at)
    SELECT endpoint.organization_id, endpoint.id,
        'msg_' || replace(gen_random_uuid()::text, '-', ''), taken.event, taken.body,
        'pending', 0, '', taken.created_at, %(now)s
    FROM taken
    CROSS JOIN LATERAL unnest(string_to_array(taken.endpoints, ','))
        WITH ORDINALITY AS named (pk, place)
    JOIN {endpoints} AS endpoint ON endpoint.id =
        CASE WHEN named.pk ~ '^{endpoint_id}$' THEN named.pk::bigint END
    ORDER BY taken.id, named.place
    RETURNING 1
)
SELECT COUNT(*) FROM taken
"""
# Elsewhere (SQLite), each emission's deliveries, keeping the emission's time as their
# `created_at`.
# Earns 250% of a fan-out's CPU (200 emissions, two endpoints) over bulk_create (which
# would also stamp created_at anew), measured in-process on PostgreSQL.
INSERT_DELIVERIES_SQL = (
    "INSERT INTO {table} (organization_id, endpoint_id, msg_id, event, body, status, "
    "attempts, last_error, created_at, updated_at) "
)
# The fields of those columns, in their order.
DELIVERY_FIELDS = (
    "organization", "endpoint", "msg_id", "event", "body", "status", "attempts", "last_error",
    "created_at", "updated_at",
)  # fmt: skip

# The due deliveries, taken in turns among the organizations (each one's oldest, then
# each one's second...) and only as far as the caps on deliveries under way allow:
# per endpoint, and per organization, counting those under way in every worker (pending,
# leased). Claims are serialized (CLAIM_LOCK on PostgreSQL, SQLite's write lock), so two
# workers cannot both fill the same endpoint's last place. The due condition is checked
# again by the UPDATE, after a row another transaction held is released.
#
# An endpoint backed off (`open_until` still to come) gets nothing; one whose back-off is
# over gets one attempt at a time, its probe (docs/events.md).
#
# On PostgreSQL the claim costs the same at any backlog: it walks the endpoints (a few
# per organization) and takes, by LATERAL, each one's head of due deliveries through the
# due_deliveries and leased_deliveries indexes, no more rows than the endpoint has room
# for: its first attempts by id, its retries come due by their time, its attempts whose
# lease ran out. Only those few rows are then numbered for the turns. (Numbering every
# due row instead took 0.9 s a claim beside 430,000 deliveries to dead endpoints.)
# Each probe is ordered as its index is: the first attempts by (next_attempt_at, id), all
# null then id, because the planner does not take `IS NULL` for an equality, so by `id`
# alone it walked the primary key instead, filtering; for an endpoint with nothing
# pending that read every pending delivery (200 ms a claim beside 500,000).
# The ORM cannot say it: LATERAL, window functions and an UPDATE ... RETURNING.
DUE = """status = 'pending' AND (
        (claimed_until IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= %(now)s))
        OR claimed_until < %(now)s
    )"""
# An endpoint's room: how many more of its deliveries may be under way.
ROOM = """CASE WHEN {endpoints}.open_until IS NULL THEN %(per_endpoint)s ELSE 1 END"""
# An endpoint that takes deliveries: not backed off, or its back-off is over.
TAKING = """({endpoints}.open_until IS NULL OR {endpoints}.open_until <= %(now)s)"""
CLAIM_SQL = """
WITH busy AS MATERIALIZED (
    SELECT endpoint_id, organization_id FROM {table}
    WHERE status = 'pending' AND claimed_until >= %(now)s
),
endpoint_busy AS (SELECT endpoint_id, COUNT(*) AS n FROM busy GROUP BY endpoint_id),
organization_busy AS (SELECT organization_id, COUNT(*) AS n FROM busy GROUP BY organization_id),
room AS MATERIALIZED (
    SELECT {endpoints}.id, {endpoints}.organization_id,
        {room} - COALESCE(endpoint_busy.n, 0) AS free
    FROM {endpoints} LEFT JOIN endpoint_busy ON endpoint_busy.endpoint_id = {endpoints}.id
    WHERE {taking}
),
heads AS MATERIALIZED (
    SELECT head.id, head.endpoint_id, room.organization_id,
        ROW_NUMBER() OVER (PARTITION BY head.endpoint_id ORDER BY head.id) AS endpoint_turn
    FROM room CROSS JOIN LATERAL (
        SELECT due.id, due.endpoint_id FROM (
            (SELECT id, endpoint_id FROM {table}
             WHERE endpoint_id = room.id AND status = 'pending' AND claimed_until IS NULL
                AND next_attempt_at IS NULL
             ORDER BY next_attempt_at, id LIMIT room.free)
            UNION ALL
            (SELECT id, endpoint_id FROM {table}
             WHERE endpoint_id = room.id AND status = 'pending' AND claimed_until IS NULL
                AND next_attempt_at <= %(now)s
             ORDER BY next_attempt_at, id LIMIT room.free)
            UNION ALL
            (SELECT id, endpoint_id FROM {table}
             WHERE endpoint_id = room.id AND status = 'pending' AND claimed_until IS NOT NULL
                AND claimed_until < %(now)s
             ORDER BY claimed_until LIMIT room.free)
        ) due ORDER BY due.id LIMIT room.free
    ) head
    WHERE room.free > 0
),
open AS (
    SELECT id, organization_id,
        ROW_NUMBER() OVER (PARTITION BY organization_id ORDER BY endpoint_turn, id) AS turn
    FROM heads
),
picked AS MATERIALIZED (
    SELECT open.id FROM open
    LEFT JOIN organization_busy ON organization_busy.organization_id = open.organization_id
    WHERE open.turn + COALESCE(organization_busy.n, 0) <= %(per_organization)s
    ORDER BY open.turn, open.id LIMIT %(limit)s
)
UPDATE {table} SET
    attempts = CASE WHEN claimed_until IS NULL THEN attempts + 1 ELSE attempts END,
    claimed_until = %(until)s, next_attempt_at = NULL, updated_at = %(now)s
WHERE id IN (SELECT id FROM picked) AND {due}
RETURNING id, endpoint_id, msg_id, event, body, attempts
"""
# SQLite has no LATERAL: the same claim numbering every due row, which its single
# writer and small databases afford.
CLAIM_SQLITE = """
WITH busy AS MATERIALIZED (
    SELECT endpoint_id, organization_id FROM {table}
    WHERE status = 'pending' AND claimed_until >= %(now)s
),
endpoint_busy AS (SELECT endpoint_id, COUNT(*) AS n FROM busy GROUP BY endpoint_id),
organization_busy AS (SELECT organization_id, COUNT(*) AS n FROM busy GROUP BY organization_id),
due AS MATERIALIZED (
    SELECT {table}.id, endpoint_id, {table}.organization_id, {room} AS room,
        ROW_NUMBER() OVER (PARTITION BY endpoint_id ORDER BY {table}.id) AS endpoint_turn
    FROM {table} JOIN {endpoints} ON {endpoints}.id = {table}.endpoint_id
    WHERE {due} AND {taking}
),
open AS (
    SELECT due.id, due.organization_id,
        ROW_NUMBER() OVER (PARTITION BY due.organization_id ORDER BY due.endpoint_turn, due.id)
            AS turn
    FROM due LEFT JOIN endpoint_busy ON endpoint_busy.endpoint_id = due.endpoint_id
    WHERE due.endpoint_turn + COALESCE(endpoint_busy.n, 0) <= due.room
),
picked AS MATERIALIZED (
    SELECT open.id FROM open
    LEFT JOIN organization_busy ON organization_busy.organization_id = open.organization_id
    WHERE open.turn + COALESCE(organization_busy.n, 0) <= %(per_organization)s
    ORDER BY open.turn, open.id LIMIT %(limit)s
)
UPDATE {table} SET
    attempts = CASE WHEN claimed_until IS NULL THEN attempts + 1 ELSE attempts END,
    claimed_until = %(until)s, next_attempt_at = NULL, updated_at = %(now)s
WHERE id IN (SELECT id FROM picked) AND {due}
RETURNING id, endpoint_id, msg_id, event, body, attempts
"""
# Whether any endpoint that takes deliveries has one due: an idle worker's look costs
# this one statement (three index probes per endpoint, by LATERAL, each ordered as its
# index is, as in the claim: EXISTS subqueries joined by OR were planned as hashed
# subplans reading every pending row, a bare LIMIT 1 as a sequential scan, and an ORDER
# BY id as a walk of the primary key), not the claim's transaction and lock.
ANY_DUE_SQL = """
SELECT EXISTS (
    SELECT 1 FROM {endpoints} CROSS JOIN LATERAL (
        (SELECT 1 FROM {table} WHERE endpoint_id = {endpoints}.id
            AND status = 'pending' AND claimed_until IS NULL AND next_attempt_at IS NULL
         ORDER BY next_attempt_at, id LIMIT 1)
        UNION ALL
        (SELECT 1 FROM {table} WHERE endpoint_id = {endpoints}.id
            AND status = 'pending' AND claimed_until IS NULL AND next_attempt_at <= %(now)s
         ORDER BY next_attempt_at, id LIMIT 1)
        UNION ALL
        (SELECT 1 FROM {table} WHERE endpoint_id = {endpoints}.id
            AND status = 'pending' AND claimed_until IS NOT NULL AND claimed_until < %(now)s
         ORDER BY claimed_until LIMIT 1)
    ) due
    WHERE {taking}
)
"""
# One key (of the two-integer key space, apart from sending's one-integer keys) that
# every worker's delivery claim holds for its transaction.
CLAIM_LOCK = "SELECT pg_advisory_xact_lock(20916, 1)"


def claim_statement(sql: str) -> str:
    """One of the claim's statements with its tables and conditions filled in."""
    quote = connection.ops.quote_name
    endpoints = quote(Endpoint._meta.db_table)
    return sql.format(
        table=quote(Delivery._meta.db_table),
        endpoints=endpoints,
        due=DUE,
        room=ROOM.format(endpoints=endpoints),
        taking=TAKING.format(endpoints=endpoints),
    )


def listening_rows(organization_id: int) -> list[tuple[int, Any, str]]:
    """LISTENING_SQL: (id, events as stored, format) of the organization's active endpoints."""
    with connection.cursor() as cursor:
        cursor.execute(
            LISTENING_SQL.format(table=connection.ops.quote_name(Endpoint._meta.db_table)),
            [organization_id],
        )
        return cursor.fetchall()


def take_emissions(limit: int) -> list[tuple]:
    """TAKE_EMISSIONS_SQL (SQLite): up to `limit` of the oldest emissions, removed; the
    caller's transaction writes their deliveries. (id, endpoints, event, body,
    created_at) each."""
    table = connection.ops.quote_name(Emission._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(TAKE_EMISSIONS_SQL.format(table=table), [limit])
        return cursor.fetchall()


def fan_out_emissions(limit: int) -> int:
    """FAN_OUT_SQL (PostgreSQL): up to `limit` of the oldest emissions made their
    deliveries; how many were taken."""
    quote = connection.ops.quote_name
    sql = FAN_OUT_SQL.format(
        emissions=quote(Emission._meta.db_table),
        deliveries=quote(Delivery._meta.db_table),
        endpoints=quote(Endpoint._meta.db_table),
        endpoint_id=ENDPOINT_ID,
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(sql, {"limit": limit, "now": now})
        return cursor.fetchone()[0]


def insert_deliveries(rows: list[tuple]) -> None:
    """Pending deliveries (organization, endpoint, msg_id, event, body, created_at)."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    head = INSERT_DELIVERIES_SQL.format(table=connection.ops.quote_name(Delivery._meta.db_table))
    pending = [(*row[:5], DeliveryStatus.PENDING.value, 0, "", row[5], now) for row in rows]
    types = column_types(Delivery, DELIVERY_FIELDS)
    execute_together(insert_statements(head, types, pending))


def claim_deliveries(
    *, limit: int, now: datetime, until: datetime, per_endpoint: int, per_organization: int
) -> list[tuple[int, int, str, str, str, int]]:
    """CLAIM_SQL: up to `limit` due deliveries leased until `until`, at most
    `per_endpoint` (one for an endpoint whose back-off is over) and `per_organization`
    under way with those already leased; (id, endpoint_id, msg_id, event, body,
    attempts) each."""
    ops = connection.ops
    params = {
        "now": ops.adapt_datetimefield_value(now),
        "until": ops.adapt_datetimefield_value(until),
        "limit": limit,
        "per_endpoint": per_endpoint,
        "per_organization": per_organization,
    }
    if connection.vendor != "postgresql":  # one statement: SQLite's write lock is enough
        with connection.cursor() as cursor:
            cursor.execute(claim_statement(CLAIM_SQLITE), params)
            return cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute(claim_statement(ANY_DUE_SQL), params)
        if not cursor.fetchone()[0]:
            return []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(CLAIM_LOCK)  # then a snapshot that sees every earlier claim
        cursor.execute(claim_statement(CLAIM_SQL), params)
        return cursor.fetchall()
