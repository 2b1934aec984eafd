"""The events app's hand-written SQL: the endpoints an emission looks up, the emissions'
insert (the outbox), their fan-out into deliveries, and the deliveries' claim. Each
statement says what earns it its place beside the ORM; every one runs on PostgreSQL in
the suite (tests/events/)."""

from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from events.models import Delivery, Emission, Endpoint
from messaging_project.core.database import execute_together, insert_statements

# The endpoints that may want an event (every emission asks, usually to learn that
# nobody listens).
# Earns 12-15% of the inbound webhook's CPU over the ORM, measured in-process on PostgreSQL.
LISTENING_SQL = (
    "SELECT id, events, format FROM {table} "
    "WHERE organization_id = %s AND is_active AND deleted_at IS NULL ORDER BY id"
)
# The oldest emissions, taken by one statement that removes them: their deliveries are
# written in the same transaction, so a worker dying midway leaves them to the next.
# The ORM cannot say it: a DELETE ... RETURNING of rows picked with SKIP LOCKED.
TAKE_EMISSIONS_SQL = """
WITH picked AS MATERIALIZED (
    SELECT id FROM {table} ORDER BY id LIMIT %s {lock}
)
DELETE FROM {table} WHERE id IN (SELECT id FROM picked)
RETURNING id, endpoints, event, body, created_at
"""
# Each emission's deliveries, keeping the emission's time as their `created_at`.
# Earns 250% of a fan-out's CPU (200 emissions, two endpoints) over bulk_create (which
# would also stamp created_at anew), measured in-process on PostgreSQL.
INSERT_DELIVERIES_SQL = (
    "INSERT INTO {table} (organization_id, endpoint_id, msg_id, event, body, status, "
    "attempts, last_error, created_at, updated_at) VALUES "
)
DELIVERY_ROW = "(%s, %s, %s, %s, %s, 'pending', 0, '', %s, %s)"

# The due deliveries, taken in turns among the organizations (each one's oldest, then
# each one's second...) and only as far as the caps on deliveries under way allow:
# per endpoint, and per organization, counting those under way in every worker (pending,
# leased). Claims are serialized (CLAIM_LOCK on PostgreSQL, SQLite's write lock), so two
# workers cannot both fill the same endpoint's last place. The due condition is checked
# again by the UPDATE, after a row another transaction held is released.
# The ORM cannot say it: window functions over the due rows and an UPDATE ... RETURNING.
DUE = """status = 'pending' AND (
        (claimed_until IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= %(now)s))
        OR claimed_until < %(now)s
    )"""
CLAIM_SQL = """
WITH busy AS MATERIALIZED (
    SELECT endpoint_id, organization_id FROM {table}
    WHERE status = 'pending' AND claimed_until >= %(now)s
),
endpoint_busy AS (SELECT endpoint_id, COUNT(*) AS n FROM busy GROUP BY endpoint_id),
organization_busy AS (SELECT organization_id, COUNT(*) AS n FROM busy GROUP BY organization_id),
due AS MATERIALIZED (
    SELECT id, endpoint_id, organization_id,
        ROW_NUMBER() OVER (PARTITION BY endpoint_id ORDER BY id) AS endpoint_turn
    FROM {table} WHERE {due}
),
open AS (
    SELECT due.id, due.organization_id,
        ROW_NUMBER() OVER (PARTITION BY due.organization_id ORDER BY due.endpoint_turn, due.id)
            AS turn
    FROM due LEFT JOIN endpoint_busy ON endpoint_busy.endpoint_id = due.endpoint_id
    WHERE due.endpoint_turn + COALESCE(endpoint_busy.n, 0) <= %(per_endpoint)s
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
# Whether any delivery is due: an idle worker's look costs this one statement, not the
# claim's transaction and lock.
ANY_DUE_SQL = "SELECT EXISTS (SELECT 1 FROM {table} WHERE {due})"
# One key (of the two-integer key space, apart from sending's one-integer keys) that
# every worker's delivery claim holds for its transaction.
CLAIM_LOCK = "SELECT pg_advisory_xact_lock(20916, 1)"


def skip_locked() -> str:
    """Rows another worker holds are passed over where the database can (PostgreSQL)."""
    return "FOR UPDATE SKIP LOCKED" if connection.features.has_select_for_update_skip_locked else ""


def listening_rows(organization_id: int) -> list[tuple[int, Any, str]]:
    """LISTENING_SQL: (id, events as stored, format) of the organization's active endpoints."""
    with connection.cursor() as cursor:
        cursor.execute(
            LISTENING_SQL.format(table=connection.ops.quote_name(Endpoint._meta.db_table)),
            [organization_id],
        )
        return cursor.fetchall()


def take_emissions(limit: int) -> list[tuple]:
    """TAKE_EMISSIONS_SQL: up to `limit` of the oldest emissions, removed; the caller's
    transaction writes their deliveries. (id, endpoints, event, body, created_at) each."""
    table = connection.ops.quote_name(Emission._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(TAKE_EMISSIONS_SQL.format(table=table, lock=skip_locked()), [limit])
        return cursor.fetchall()


def insert_deliveries(rows: list[tuple]) -> None:
    """Pending deliveries (organization, endpoint, msg_id, event, body, created_at)."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    head = INSERT_DELIVERIES_SQL.format(table=connection.ops.quote_name(Delivery._meta.db_table))
    execute_together(insert_statements(head, DELIVERY_ROW, [(*row, now) for row in rows]))


def claim_deliveries(
    *, limit: int, now: datetime, until: datetime, per_endpoint: int, per_organization: int
) -> list[tuple[int, int, str, str, str, int]]:
    """CLAIM_SQL: up to `limit` due deliveries leased until `until`, at most
    `per_endpoint` and `per_organization` under way with those already leased; (id,
    endpoint_id, msg_id, event, body, attempts) each."""
    ops = connection.ops
    sql = CLAIM_SQL.format(table=ops.quote_name(Delivery._meta.db_table), due=DUE)
    at = ops.adapt_datetimefield_value(now)
    params = {
        "now": at,
        "until": ops.adapt_datetimefield_value(until),
        "limit": limit,
        "per_endpoint": per_endpoint,
        "per_organization": per_organization,
    }
    if connection.vendor != "postgresql":  # one statement: SQLite's write lock is enough
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute(
            ANY_DUE_SQL.format(table=ops.quote_name(Delivery._meta.db_table), due=DUE), params
        )
        if not cursor.fetchone()[0]:
            return []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(CLAIM_LOCK)  # then a snapshot that sees every earlier claim
        cursor.execute(sql, params)
        return cursor.fetchall()
