"""Contacts' hand-written SQL: the live counts kept per block of ids, the plain list's
page, the sender's lookup, and an import's batch. Each statement says what earns it its
place beside the ORM; every one runs on PostgreSQL in the suite (tests/contacts/)."""

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, cast

from django.db import DEFAULT_DB_ALIAS, connection, connections

from contacts.models import Contact, ContactBlock
from messaging_project.core.database import Statement

TABLES = {"contact": Contact._meta.db_table, "blocks": ContactBlock._meta.db_table}
FIELDS = Contact._meta.concrete_fields
NAMES = [field.attname for field in FIELDS]
# Concrete fields: each has its column.
COLUMNS = [cast(str, field.column) for field in FIELDS]

# The total's row, or a count where it has not started (contacts written before it or by
# hand). COALESCE stops at its first value, so the count runs only when the row is missing.
# Part of PAGE_SQL, whose figure it shares.
LIVE_COUNT_SQL = """
SELECT COALESCE(
  (SELECT live FROM {blocks} WHERE organization_id = %(org)s AND block = %(total)s),
  (SELECT COUNT(*) FROM {contact} WHERE organization_id = %(org)s AND deleted_at IS NULL)
)
""".format(**TABLES)

# One page of the plain list with the exact total on each row: one query, one snapshot.
# The page is found by its first id: the subquery skips `skip` entries of the narrow
# (organization, id) index from `low` on (an index-only scan on PostgreSQL), and the
# page is then read by primary key. A plain OFFSET would fetch every skipped row, and
# ORDER BY id LIMIT alone walks the primary key through other organizations' older rows.
# Earns 39% (page 1) and 26% (a deep page) of GET /api/contacts's CPU on 100,000
# contacts over the ORM (which also needs a query more), measured in-process on PostgreSQL.
PAGE_SQL = """
SELECT {columns}, ({live_count}) AS list_total FROM {contact}
WHERE organization_id = %(org)s AND deleted_at IS NULL AND id >= (
  SELECT id FROM {contact} WHERE organization_id = %(org)s AND deleted_at IS NULL
    AND id >= %(low)s
  ORDER BY id LIMIT 1 OFFSET %(skip)s
)
ORDER BY id LIMIT %(limit)s
""".format(
    columns=", ".join(COLUMNS),
    live_count=LIVE_COUNT_SQL,
    **TABLES,
)


# The largest id a contact can have (a 64-bit key): the total's row covers every id.
MAX_ID = 2**63 - 1

# One row of the statement below: `delta` for the organization's row of one block of ids
# [low, high), or the start of that row when it has none yet. A missing row is started
# from a count made in this transaction, so it already includes this transaction's own
# change; if another transaction starts it at the same time, ON CONFLICT waits for that
# one to commit and then adds our delta to its count, which could not see our
# uncommitted row. When the row exists, NOT EXISTS is false, so the count reads no
# contact at all (and COUNT(*) still yields the one row that goes to ON CONFLICT).
# The ORM cannot say it: an upsert whose first value is a count made by the statement.
ADJUST_ROW_SQL = """
SELECT %s, %s, COUNT(*) FROM {contact}
WHERE organization_id = %s AND deleted_at IS NULL AND id >= %s AND id < %s
  AND NOT EXISTS (SELECT 1 FROM {blocks} WHERE organization_id = %s AND block = %s)
"""
# Both rows a contact counts in, the total's and its block's, in one statement: a write
# costs one query, as it did with the total alone, and the two always agree.
ADJUST_COUNTS_SQL = """
INSERT INTO {blocks} (organization_id, block, live)
{total_row} UNION ALL {block_row}
ON CONFLICT (organization_id, block) DO UPDATE SET live = {blocks}.live + %s
"""

# One row alone: the import adds its batch's contacts to the total once and to each of
# their blocks, in that order (contacts.services.adjust_live_counts).
ADJUST_ONE_SQL = """
INSERT INTO {blocks} (organization_id, block, live)
{row}
ON CONFLICT (organization_id, block) DO UPDATE SET live = {blocks}.live + %s
"""

# Every row of one organization counted afresh, for contacts loaded in bulk without the
# services (the benchmark's seed). Not for use while others write its contacts. The ORM
# cannot say it: an INSERT ... SELECT grouped by block.
RECOUNT_SQL = """
INSERT INTO {blocks} (organization_id, block, live)
SELECT organization_id, %(total)s, COUNT(*) FROM {contact}
WHERE organization_id = %(org)s AND deleted_at IS NULL GROUP BY organization_id
UNION ALL
SELECT organization_id, id / %(size)s, COUNT(*) FROM {contact}
WHERE organization_id = %(org)s AND deleted_at IS NULL GROUP BY organization_id, id / %(size)s
"""


def literal_sql(template: str, **values: int) -> str:
    """The template with its tables and integer values in place.

    Integers only, so nothing can be injected; inlined so that PostgreSQL sees the same
    `id / 1000` in SELECT and GROUP BY whatever the parameter binding.
    """
    return template.format(**table_names()) % {name: int(value) for name, value in values.items()}


def table_names() -> dict[str, str]:
    quote = connection.ops.quote_name
    return {"blocks": quote(ContactBlock._meta.db_table), "contact": quote(Contact._meta.db_table)}


def adjust_row(organization_id: int, block: int, low: int, high: int) -> tuple[str, list]:
    sql = ADJUST_ROW_SQL.format(**table_names())
    return sql, [organization_id, block, organization_id, low, high, organization_id, block]


def live_count_statement(organization_id: int, contact_id: int, delta: int) -> Statement:
    """The statement that adds `delta` to the total and to the block of `contact_id`."""
    block = contact_id // ContactBlock.SIZE
    total_sql, total_params = adjust_row(organization_id, ContactBlock.TOTAL, 0, MAX_ID)
    block_sql, block_params = adjust_row(
        organization_id, block, block * ContactBlock.SIZE, (block + 1) * ContactBlock.SIZE
    )
    sql = ADJUST_COUNTS_SQL.format(total_row=total_sql, block_row=block_sql, **table_names())
    return sql, [*total_params, *block_params, delta]


def live_counts_statements(organization_id: int, per_block: dict[int, int]) -> list[Statement]:
    """The statements that add each block's delta to it and their sum to the total: the
    total's row first, then the blocks' in ascending order, the order every writer takes
    them in (a single write takes the total, then its one block), so that writers wait
    for each other instead of each holding a row another waits for."""
    statements: list[Statement] = []
    rows = [(ContactBlock.TOTAL, 0, MAX_ID, sum(per_block.values()))]
    rows += [
        (block, block * ContactBlock.SIZE, (block + 1) * ContactBlock.SIZE, delta)
        for block, delta in sorted(per_block.items())
    ]
    for block, low, high, delta in rows:
        row_sql, row_params = adjust_row(organization_id, block, low, high)
        sql = ADJUST_ONE_SQL.format(row=row_sql, **table_names())
        statements.append((sql, [*row_params, delta]))
    return statements


def recount_blocks(organization_id: int) -> None:
    """RECOUNT_SQL for one organization (its rows deleted first by the caller)."""
    sql = literal_sql(
        RECOUNT_SQL, org=organization_id, size=ContactBlock.SIZE, total=ContactBlock.TOTAL
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)


def live_contact_count(*, organization_id: int) -> int:
    """The exact number of the organization's live contacts, without counting them."""
    with connection.cursor() as cursor:
        cursor.execute(LIVE_COUNT_SQL, {"org": organization_id, "total": ContactBlock.TOTAL})
        return cursor.fetchone()[0]


def page(
    *, organization_id: int, low_id: int, skip: int, limit: int
) -> tuple[list[Contact], int | None]:
    """PAGE_SQL: up to `limit` live contacts from the `skip`-th at or after `low_id`, and
    the exact total (None when the page is empty)."""
    params = {
        "org": organization_id,
        "total": ContactBlock.TOTAL,
        "low": low_id,
        "skip": skip,
        "limit": limit,
    }
    # The thread's connection, looked up once: each attribute of `connection` looks it up.
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        cursor.execute(PAGE_SQL, params)
        rows = cursor.fetchall()
    # Made into contacts as the ORM would, with its converters (on PostgreSQL the address's
    # JSON alone). A RawQuerySet, which maps the columns to fields anew on every query,
    # cost a list request 0.27 ms more CPU (in-process, median of 1,400 requests).
    converters = field_converters(db)
    contacts = [contact_from_row(db, values, converters) for *values, _total in rows]
    return contacts, rows[0][-1] if rows else None


# The live contact of a WhatsApp user, by number or by user id: every inbound message
# looks for its sender. The unique live indexes make it one row at most. No ORDER BY:
# with it, PostgreSQL without fresh statistics walked the (organization, id) index
# through every contact of the organization to find the one with this number.
# Earns 15-19% of the inbound webhook's CPU over the ORM, measured in-process on PostgreSQL.
LIVE_BY_SQL = {
    field: f"SELECT {', '.join(COLUMNS)} FROM {TABLES['contact']} "  # noqa: S608
    f"WHERE organization_id = %s AND {field} = %s AND deleted_at IS NULL LIMIT 1"
    for field in ("phone", "user_id")
}


def live_contact_by(*, organization_id: int, **identity: str) -> Contact | None:
    """The organization's live contact with this `phone=` or `user_id=`, if any."""
    [(field, value)] = identity.items()
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        cursor.execute(LIVE_BY_SQL[field], [organization_id, value])
        row = cursor.fetchone()
    return None if row is None else contact_from_row(db, list(row), field_converters(db))


def contact_from_row(db, values: list, converters: list) -> Contact:
    """A contact from its columns (FIELDS' order), with the ORM's `converters`."""
    for index, convert in converters:
        values[index] = convert(values[index], None, db)
    return Contact.from_db(db.alias, NAMES, values)


def field_converters(db) -> list[tuple[int, Callable[..., Any]]]:
    """The converters the ORM applies to each of a contact's columns on the database."""
    table = Contact._meta.db_table
    return [
        (index, converter)
        for index, field in enumerate(FIELDS)
        for converter in db.ops.get_db_converters(field.get_col(table))
        + field.get_db_converters(db)
    ]


# An import's batch of new contacts (contacts/importing.py) in one statement, its rows in
# one JSON parameter: ON CONFLICT leaves out each number a concurrent writer holds (the
# partial unique index decides), RETURNING names the contacts made, in the numbers'
# order, which is the order their index entries are locked in. Earns 77% of an import's
# time (20,000 new rows: 9.0 s to 2.1 s) over bulk_create, which built a model and a
# parameter per value and needed a second query for the ids.
IMPORT_INSERT_SQL = """
INSERT INTO {contact} (uuid, organization_id, created_by, created_at, updated_at, phone,
    first_name, last_name, email, contact_group_id, metadata, address, user_id, is_favorite,
    opted_out)
SELECT gen_random_uuid(), %(org)s, %(by)s, %(now)s, %(now)s, r.phone,
    r.first_name, r.last_name, r.email, r.contact_group_id, r.metadata, r.address, '',
    COALESCE(r.is_favorite, false), COALESCE(r.opted_out, false)
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(phone text, first_name text, last_name text,
    email text, contact_group_id bigint, metadata jsonb, address jsonb, is_favorite boolean,
    opted_out boolean)
ORDER BY r.phone
ON CONFLICT DO NOTHING
RETURNING id, phone
""".format(**TABLES)

# An import's updates of a batch (on_duplicate=update) in one statement: a value the row
# leaves blank keeps the contact's, its extra columns and address parts are merged into
# the metadata and the address, and a file opts a contact out but never back in.
# Earns 89% of an import's time (20,000 rows updating contacts: 31.5 s to 3.4 s) over
# bulk_update, which built a CASE of 1,000 branches per column.
IMPORT_UPDATE_SQL = """
UPDATE {contact} AS c SET
    first_name = COALESCE(r.first_name, c.first_name),
    last_name = COALESCE(r.last_name, c.last_name),
    email = COALESCE(r.email, c.email),
    contact_group_id = COALESCE(r.contact_group_id, c.contact_group_id),
    metadata = CASE
        WHEN r.metadata IS NULL THEN c.metadata
        WHEN jsonb_typeof(c.metadata) = 'object' THEN c.metadata || r.metadata
        ELSE r.metadata END,
    address = CASE
        WHEN r.address IS NULL THEN c.address
        WHEN jsonb_typeof(c.address) = 'object' THEN c.address || r.address
        ELSE r.address END,
    is_favorite = COALESCE(r.is_favorite, c.is_favorite),
    opted_out = c.opted_out OR COALESCE(r.opted_out, false),
    updated_at = %(now)s
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id bigint, first_name text, last_name text,
    email text, contact_group_id bigint, metadata jsonb, address jsonb, is_favorite boolean,
    opted_out boolean)
WHERE c.id = r.id AND c.deleted_at IS NULL
""".format(**TABLES)


def insert_imported(
    *, organization_id: int, created_by: int, now: datetime, rows: list[dict[str, Any]]
) -> list[tuple[int, str]]:
    """IMPORT_INSERT_SQL: the rows (phone, first_name, last_name, email,
    contact_group_id, metadata, address, is_favorite, opted_out; a key left out is null)
    as new contacts; (id, phone) of each one inserted."""
    params: dict[str, Any] = {
        "org": organization_id,
        "by": created_by,
        "now": now,
        "rows": json.dumps(rows),
    }
    with connection.cursor() as cursor:
        cursor.execute(IMPORT_INSERT_SQL, params)
        return cursor.fetchall()


def update_imported(*, now: datetime, rows: list[dict[str, Any]]) -> None:
    """IMPORT_UPDATE_SQL: each row (id, then the values given, None for a blank) written
    over its live contact."""
    with connection.cursor() as cursor:
        cursor.execute(IMPORT_UPDATE_SQL, {"now": now, "rows": json.dumps(rows)})
