"""Reads of an organization's contacts that are more than a filter: the exact number of
its live contacts and the pages of its plain list (all live contacts, by id).

Both come from the id blocks (ContactBlock) that contacts.services keeps in step with
every create and delete, so that neither counts nor skips a million rows. The page and
its total are one small SQL statement: built with the ORM, the list ran at 0.50-0.54 of
the no-op's throughput in `make bench`, against a target of 0.6 (docs/performance.md).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import F, Q, QuerySet, Subquery, Sum, Window

from contacts.models import Contact, ContactBlock

TABLES = {"contact": Contact._meta.db_table, "blocks": ContactBlock._meta.db_table}
FIELDS = Contact._meta.concrete_fields
NAMES = [field.attname for field in FIELDS]

# The total's row, or a count where it has not started (contacts written before it or by
# hand). COALESCE stops at its first value, so the count runs only when the row is missing.
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
PAGE_SQL = """
SELECT {columns}, ({live_count}) AS list_total FROM {contact}
WHERE organization_id = %(org)s AND deleted_at IS NULL AND id >= (
  SELECT id FROM {contact} WHERE organization_id = %(org)s AND deleted_at IS NULL
    AND id >= %(low)s
  ORDER BY id LIMIT 1 OFFSET %(skip)s
)
ORDER BY id LIMIT %(limit)s
""".format(
    columns=", ".join(field.column for field in FIELDS),
    live_count=LIVE_COUNT_SQL,
    **TABLES,
)


# The live contact of a WhatsApp user, by number or by user id: every inbound message
# looks for its sender, and through the ORM building this statement cost about three
# times running it (docs/performance.md, 2026-11-24). The unique live indexes make it
# one row at most. No ORDER BY: with it, PostgreSQL without fresh statistics walked the
# (organization, id) index through every contact of the organization to find the one
# with this number, ~0.5 ms more per 3,000 contacts (docs/performance.md, 2026-11-25).
LIVE_BY_SQL = {
    field: f"SELECT {', '.join(f.column for f in FIELDS)} FROM {TABLES['contact']} "  # noqa: S608
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


def live_contacts(*, organization_id: int) -> QuerySet[Contact]:
    """The organization's plain list: its live contacts by id."""
    return Contact.objects.live().filter(organization_id=organization_id).order_by("id")


def live_contact_count(*, organization_id: int) -> int:
    """The exact number of the organization's live contacts, without counting them."""
    with connection.cursor() as cursor:
        cursor.execute(LIVE_COUNT_SQL, {"org": organization_id, "total": ContactBlock.TOTAL})
        return cursor.fetchone()[0]


@dataclass(frozen=True)
class PageStart:
    """Where the walk to a page's first contact begins: at the first live contact whose
    id is at least `low_id`, skipping `skip` live contacts from there."""

    low_id: int
    skip: int


def page_start(*, organization_id: int, offset: int) -> PageStart | None:
    """Where the live contact at `offset` in the plain list is found; None past the last.

    A shallow offset is walked from the start: it skips fewer index entries than a block
    holds. A deeper one starts at the block holding that contact, found in one query by
    the running sum of the blocks, so at most SIZE entries are skipped instead of
    `offset`. The blocks are trusted only when they add up to the total; otherwise
    (contacts written outside the services) the walk starts from the beginning.
    """
    if offset < ContactBlock.SIZE:
        return PageStart(low_id=0, skip=offset)
    blocks = ContactBlock.objects.filter(organization_id=organization_id)
    row = (
        blocks.filter(block__gte=0)
        .annotate(
            running=Window(Sum("live"), order_by="block"),
            listed=Window(Sum("live")),
            total=Subquery(blocks.filter(block=ContactBlock.TOTAL).values("live")),
        )
        # The block holding the contact at `offset`, or, past the last one, the last block.
        .filter(Q(running__gt=offset) | Q(running=F("listed")))
        .order_by("block")
        .values_list("block", "live", "running", "listed", "total")
        .first()
    )
    if row is None:  # no blocks: the walk
        return PageStart(low_id=0, skip=offset)
    block, live, running, listed, total = row
    if total is None or listed != total:  # the blocks miss contacts: the walk
        return PageStart(low_id=0, skip=offset)
    if running <= offset:
        return None
    before = int(running - live)  # PostgreSQL sums into numeric
    return PageStart(low_id=block * ContactBlock.SIZE, skip=offset - before)


@dataclass(frozen=True)
class ContactPage:
    contacts: list[Contact]
    total: int | None  # read with the page; None when the page is empty


def contact_page(*, organization_id: int, offset: int, limit: int) -> ContactPage:
    """At most `limit` of the organization's live contacts by id from `offset` on, and
    the exact number of its live contacts, in one query (two for a deep page: its start)."""
    start = page_start(organization_id=organization_id, offset=offset)
    if start is None:
        return ContactPage(contacts=[], total=None)
    params = {
        "org": organization_id,
        "total": ContactBlock.TOTAL,
        "low": start.low_id,
        "skip": start.skip,
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
    return ContactPage(contacts=contacts, total=rows[0][-1] if rows else None)


def field_converters(db) -> list[tuple[int, Callable[..., Any]]]:
    """The converters the ORM applies to each of a contact's columns on the database."""
    table = Contact._meta.db_table
    return [
        (index, converter)
        for index, field in enumerate(FIELDS)
        for converter in db.ops.get_db_converters(field.get_col(table))
        + field.get_db_converters(db)
    ]
