"""Deep pages of the contact list found from per-block live counts are exact.

Most tests shrink the blocks to 5 ids, so a few dozen contacts span many blocks and
every page boundary case (a page straddling blocks, emptied blocks, the last block,
past the end) is reached. The concurrency test needs real concurrent transactions, so
it runs on PostgreSQL only (DATABASE_URL=postgres://...).
"""

import importlib
import random
from collections import Counter

import pytest
from django.db import connection
from django.http import Http404

from contacts import selectors, services
from contacts.models import Contact, ContactBlock
from tests.contacts.test_contact_counter import on_postgresql, run_concurrently
from tests.factories import ContactFactory, OrganizationFactory


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(ContactBlock, "SIZE", 5)


def live_ids(organization) -> list[int]:
    return list(
        Contact.objects.live()
        .filter(organization=organization)
        .order_by("id")
        .values_list("pk", flat=True)
    )


def start_at(organization, offset: int) -> int | None:
    """The id of the live contact at `offset` as the blocks find it, None past the end.
    Fails when the blocks cannot tell, which would leave the walk to skip `offset`."""
    start = selectors.page_start(organization_id=organization.pk, offset=offset)
    if start is None:
        return None
    assert start.skip < ContactBlock.SIZE, f"offset {offset}: the blocks could not tell"
    contacts = selectors.live_contacts(organization_id=organization.pk)
    found = contacts.filter(id__gte=start.low_id).values_list("pk", flat=True)
    return next(iter(found[start.skip : start.skip + 1]), None)


def stored_rows(organization) -> dict[int, int]:
    """The organization's rows, blocks left empty by deletes left out."""
    rows = ContactBlock.objects.filter(organization=organization).values_list("block", "live")
    return {block: live for block, live in rows if live}


def counted_rows(organization) -> dict[int, int]:
    """The rows counted from the contacts themselves."""
    ids = live_ids(organization)
    rows = dict(Counter(pk // ContactBlock.SIZE for pk in ids))
    if ids:
        rows[ContactBlock.TOTAL] = len(ids)
    return rows


def assert_exact(organization) -> None:
    """The rows match a fresh count, and every offset (and one past the end) finds the
    same contact as a plain OFFSET would."""
    assert stored_rows(organization) == counted_rows(organization)
    ids = live_ids(organization)
    for offset in range(len(ids) + 2):
        expected = ids[offset] if offset < len(ids) else None
        assert start_at(organization, offset) == expected, offset


def listed(api, page: int, per_page: int) -> dict:
    response = api.get(f"/api/contacts?page={page}&per_page={per_page}")
    assert response.status_code == 200
    return response.json()


def expected_page(organization, page: int, per_page: int) -> list[int]:
    offset = (page - 1) * per_page
    return live_ids(organization)[offset : offset + per_page]


def create(organization, n: int) -> Contact:
    return services.create_contact(
        organization=organization, phone=f"4420794{n:05d}", first_name="A"
    )


def test_random_creates_and_deletes_in_interleaved_organizations(small_blocks, org_a, org_b):
    rng = random.Random(6)
    contacts = {org_a: [], org_b: []}
    for n in range(120):
        organization = rng.choice([org_a, org_b])
        contacts[organization].append(create(organization, n))
        if rng.random() < 0.35:
            victim = contacts[organization].pop(rng.randrange(len(contacts[organization])))
            services.delete_contact(contact=victim)
            if rng.random() < 0.5:  # the same number again: a new id, in a later block
                contacts[organization].append(
                    services.create_contact(
                        organization=organization, phone=victim.phone, first_name="B"
                    )
                )
    for organization in (org_a, org_b):
        assert_exact(organization)


def test_pages_through_the_api_match_a_plain_offset(small_blocks, api, org_a, org_b):
    for n in range(60):
        create(org_a if n % 3 else org_b, n)  # org_b's ids sit between org_a's
    for contact in Contact.objects.filter(organization=org_a).order_by("id")[7:19]:
        services.delete_contact(contact=contact)  # whole blocks emptied
    total = len(live_ids(org_a))
    for per_page in (1, 3, 7, 10):
        last_page = -(-total // per_page)
        for page in range(1, last_page + 3):  # up to two pages past the end
            body = listed(api, page, per_page)
            assert [row["id"] for row in body["data"]] == expected_page(org_a, page, per_page)
            assert body["meta"]["total"] == total
    assert_exact(org_a)


def test_blocks_emptied_and_refilled(small_blocks, org_a):
    contacts = [create(org_a, n) for n in range(20)]
    for contact in contacts:
        services.delete_contact(contact=contact)
    assert_exact(org_a)  # every block empty: any offset is past the end
    for n in range(20, 33):
        create(org_a, n)
    for contact in contacts[:3]:  # deleted once more: not found, no change
        with pytest.raises(Http404):
            services.delete_contact(contact=contact)
    assert_exact(org_a)


def test_contacts_written_by_hand_fall_back_to_the_index_walk(small_blocks, api, org_a):
    walk = selectors.PageStart(low_id=0, skip=6)  # from the first contact
    ContactFactory.create_batch(12, organization=org_a)  # not through the services
    assert selectors.page_start(organization_id=org_a.pk, offset=6) == walk  # no rows
    create(org_a, 1)  # starts the total and one block, not the others
    # The blocks do not add up to the total.
    assert selectors.page_start(organization_id=org_a.pk, offset=6) == walk
    for page in range(1, 5):
        assert [row["id"] for row in listed(api, page, 3)["data"]] == expected_page(org_a, page, 3)
    services.recount_contact_blocks(organization_id=org_a.pk)
    assert_exact(org_a)


def test_a_deep_page_costs_one_query_more_than_page_1(
    small_blocks, api, org_a, django_assert_num_queries
):
    for n in range(40):
        create(org_a, n)
    with django_assert_num_queries(2):  # token; the page and its total
        body = listed(api, 1, 10)
    assert [row["id"] for row in body["data"]] == expected_page(org_a, 1, 10)
    for page in (3, 9):  # 9: past the end
        # Token; where the page starts, from the blocks; the page and its total (past
        # the end, the total alone).
        with django_assert_num_queries(3):
            body = listed(api, page, 10)
        assert [row["id"] for row in body["data"]] == expected_page(org_a, page, 10)
        assert body["meta"]["total"] == 40


def test_filtered_and_reordered_lists_keep_their_own_order(small_blocks, api, org_a):
    for n in range(30):
        services.create_contact(
            organization=org_a,
            phone=f"4420794{n:05d}",
            first_name=f"N{29 - n:02d}",
            is_favorite=n % 2 == 0,
        )
    body = api.get("/api/contacts?page=2&per_page=5&ordering=first_name").json()
    assert [row["first_name"] for row in body["data"]] == [f"N{n:02d}" for n in range(5, 10)]
    body = api.get("/api/contacts?page=2&per_page=5&is_favorite=1").json()
    favourites = Contact.objects.filter(organization=org_a, is_favorite=True).order_by("id")
    assert [row["id"] for row in body["data"]] == [c.pk for c in favourites[5:10]]


def test_the_migration_and_the_seed_count_blocks_as_the_services_do(org_a, org_b):
    """At the real block size: 2,500 contacts loaded in bulk, then counted in SQL."""
    Contact.objects.bulk_create(
        Contact(organization=org_a if n % 5 else org_b, phone=f"4420794{n:05d}", first_name="A")
        for n in range(2500)
    )
    Contact.objects.filter(organization=org_a, pk__in=live_ids(org_a)[900:1400]).update(
        deleted_at="2024-01-01T00:00:00Z"
    )
    migration = importlib.import_module("contacts.migrations.0003_contact_blocks")
    with connection.cursor() as cursor:
        cursor.execute(migration.COUNT_BLOCKS_SQL)
    migrated = {org: stored_rows(org) for org in (org_a, org_b)}
    for organization in (org_a, org_b):
        services.recount_contact_blocks(organization_id=organization.pk)
        assert stored_rows(organization) == migrated[organization] == counted_rows(organization)
    ids = live_ids(org_a)
    for offset in (0, 999, 1000, 1001, 1499, 1500, len(ids) - 1, len(ids)):
        expected = ids[offset] if offset < len(ids) else None
        assert start_at(org_a, offset) == expected


@on_postgresql
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("started", [True, False], ids=["blocks-running", "blocks-starting"])
def test_blocks_stay_exact_under_concurrent_creates_and_deletes(small_blocks, started):
    first, second = OrganizationFactory(), OrganizationFactory()
    existing = [create(first if n % 4 else second, n) for n in range(40)]
    victims = [contact for contact in existing if contact.organization_id == first.pk][:12]
    if not started:  # the blocks the deletes land in have no row: the writers start them
        blocks = {contact.pk // ContactBlock.SIZE for contact in victims}
        ContactBlock.objects.filter(organization=first, block__in=blocks).delete()

    def create_job(organization, n):
        return lambda: create(organization, n)

    def delete_job(contact):
        return lambda: services.delete_contact(contact=contact)

    jobs = [create_job(first, 100 + n) for n in range(16)]
    jobs += [create_job(second, 200 + n) for n in range(6)]  # ids interleaved with first's
    jobs += [delete_job(contact) for contact in victims]
    jobs += [delete_job(contact) for contact in victims[:4]]  # the same contacts again
    jobs += [create_job(first, 100 + n) for n in range(3)]  # duplicates, refused
    run_concurrently(jobs)

    assert len(live_ids(first)) == 30 - 12 + 16
    for organization in (first, second):
        assert_exact(organization)
