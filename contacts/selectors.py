"""Reads of an organization's contacts that are more than a filter: the exact number of
its live contacts and the pages of its plain list (all live contacts, by id).

Both come from the id blocks (ContactBlock) that contacts.services keeps in step with
every create and delete, so that neither counts nor skips a million rows. The page and
its total are one hand-written statement (contacts/queries.py).
"""

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import F, Q, QuerySet, Subquery, Sum, Window

from contacts import queries
from contacts.models import Contact, ContactBlock


def live_contacts(*, organization_id: int) -> QuerySet[Contact]:
    """The organization's plain list: its live contacts by id."""
    return Contact.objects.live().filter(organization_id=organization_id).order_by("id")


def live_contact_count(*, organization_id: int) -> int:
    """The exact number of the organization's live contacts, without counting them."""
    return queries.live_contact_count(organization_id=organization_id)


def live_contact_by(*, organization_id: int, **identity: str) -> Contact | None:
    """The organization's live contact with this `phone=` or `user_id=`, if any."""
    return queries.live_contact_by(organization_id=organization_id, **identity)


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
    contacts, total = queries.page(
        organization_id=organization_id, low_id=start.low_id, skip=start.skip, limit=limit
    )
    return ContactPage(contacts=contacts, total=total)


EXPORT_CHUNK = 2000


def export_rows(*, organization_id: int, chunk: int = EXPORT_CHUNK) -> Iterator[tuple]:
    """Every live contact of the organization as the export's values (first name, last
    name, phone, email, group name, address, favourite, opted out, metadata), by id. Read
    `chunk` rows a query, each query starting after the last id read (keyset: no OFFSET,
    no whole table in memory)."""
    live = Contact.objects.live().filter(organization_id=organization_id).order_by("id")
    last_id = 0
    while True:
        rows = list(
            live.filter(id__gt=last_id).values_list(
                "id",
                "first_name",
                "last_name",
                "phone",
                "email",
                "contact_group__name",
                "address",
                "is_favorite",
                "opted_out",
                "metadata",
            )[:chunk]
        )
        for row in rows:
            yield row[1:]
        if len(rows) < chunk:
            return
        last_id = rows[-1][0]
