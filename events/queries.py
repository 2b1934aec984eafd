"""The events app's hand-written SQL: the endpoints an emission looks up, the emissions'
insert (the outbox), their fan-out into deliveries, and the deliveries' claim. Each
statement says what earns it its place beside the ORM; every one runs on PostgreSQL in
the suite (tests/events/)."""

from datetime import datetime
from typing import Any

from django.db import connection
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

# The rows are picked in a materialized CTE: as a plain `IN (subquery)` PostgreSQL may
# run the subquery again for each row it updates and take more than the LIMIT.
# The ORM cannot say it: an UPDATE ... RETURNING of rows picked with SKIP LOCKED.
CLAIM_SQL = """
WITH picked AS MATERIALIZED (
    SELECT id FROM {table}
    WHERE status = 'pending' AND (
        (claimed_until IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= %s))
        OR claimed_until < %s
    )
    ORDER BY id LIMIT %s {lock}
)
UPDATE {table} SET
    attempts = CASE WHEN claimed_until IS NULL THEN attempts + 1 ELSE attempts END,
    claimed_until = %s, next_attempt_at = NULL, updated_at = %s
WHERE id IN (SELECT id FROM picked)
RETURNING id, endpoint_id, msg_id, event, body, attempts
"""


def skip_locked() -> str:
    """Rows another worker holds are passed over where the database can (PostgreSQL)."""
    return "FOR UPDATE SKIP LOCKED" if connection.features.has_select_for_update_skip_locked else ""


def listening_rows(organization_id: int) -> list[tuple[int, Any]]:
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


def claim_deliveries(*, limit: int, now: datetime, until: datetime) -> list[tuple]:
    """CLAIM_SQL: up to `limit` due deliveries leased until `until`; (id, endpoint_id,
    msg_id, event, body, attempts) each."""
    ops = connection.ops
    sql = CLAIM_SQL.format(table=ops.quote_name(Delivery._meta.db_table), lock=skip_locked())
    at = ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(sql, [at, at, limit, ops.adapt_datetimefield_value(until), at])
        return cursor.fetchall()
