"""The live-contact counter behind the contact list's `meta.total` stays exact.

The concurrency tests need real concurrent transactions, so they run on PostgreSQL
(CI's second pass, or DATABASE_URL=postgres://... locally) and are skipped on SQLite,
which serialises writers anyway.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.exceptions import ValidationError
from django.db import connections
from django.http import Http404

from contacts import selectors, services
from contacts.models import Contact, ContactBlock
from tests.databases import on_postgresql
from tests.factories import ContactFactory, OrganizationFactory


def live(organization) -> int:
    return Contact.objects.live().filter(organization=organization).count()


def counted(organization) -> int:
    return selectors.live_contact_count(organization_id=organization.pk)


def total_row(organization) -> int:
    return ContactBlock.objects.get(organization=organization, block=ContactBlock.TOTAL).live


def test_list_total_comes_from_the_counter_and_filters_are_counted(api, org_a):
    for n in range(12):
        services.create_contact(
            organization=org_a, phone=f"4420794600{n:02d}", first_name="A", is_favorite=n < 3
        )
    assert total_row(org_a) == 12
    assert api.get("/api/contacts").json()["meta"]["total"] == 12
    assert api.get("/api/contacts?is_favorite=1").json()["meta"]["total"] == 3


def test_contacts_written_before_the_counter_are_counted_when_it_starts(org_a):
    ContactFactory.create_batch(5, organization=org_a)  # not through the services
    assert counted(org_a) == 5  # no counter yet: a plain count
    contact = services.create_contact(organization=org_a, phone="442079460001", first_name="A")
    assert total_row(org_a) == 6
    services.delete_contact(contact=contact)
    with pytest.raises(Http404):  # a second delete is not found and changes nothing
        services.delete_contact(contact=contact)
    assert total_row(org_a) == 5 == live(org_a)


def test_a_refused_duplicate_does_not_count(org_a):
    services.create_contact(organization=org_a, phone="442079460001", first_name="A")
    with pytest.raises(ValidationError):
        services.create_contact(organization=org_a, phone="442079460001", first_name="B")
    assert counted(org_a) == 1 == live(org_a)


def run_concurrently(jobs: list) -> list:
    """Each job in its own thread (so its own connection and transaction), all released at once.

    A job refused by a service (ValidationError) or not finding its record (Http404, the
    loser of a race with a delete) returns that error as its result."""
    barrier = threading.Barrier(len(jobs))

    def run(job):
        try:
            barrier.wait()
            try:
                return job()
            except (ValidationError, Http404) as error:
                return error
        finally:
            connections.close_all()

    with ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(run, jobs))


@on_postgresql
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("started", [True, False], ids=["counter-running", "counter-starting"])
def test_counter_stays_exact_under_concurrent_creates_and_deletes(started):
    organization = OrganizationFactory()
    existing = [
        services.create_contact(organization=organization, phone=f"44207946{n:04d}", first_name="A")
        for n in range(20)
    ]
    if not started:  # contacts from before the counter: the writers race to start it
        ContactBlock.objects.filter(organization=organization).delete()

    def create(n):
        return lambda: services.create_contact(
            organization=organization, phone=f"44207947{n:04d}", first_name="B"
        )

    def delete(contact):
        return lambda: services.delete_contact(contact=contact)

    jobs = [create(n) for n in range(16)]
    jobs += [delete(contact) for contact in existing[:8]]
    jobs += [delete(contact) for contact in existing[:4]]  # the same contacts again
    jobs += [create(n) for n in range(4)]  # duplicates of numbers being created
    results = run_concurrently(jobs)

    refused = sum(isinstance(result, ValidationError) for result in results)
    assert refused == 4
    assert sum(isinstance(result, Http404) for result in results) == 4  # the second deletes
    assert live(organization) == 20 + 16 - 8
    assert total_row(organization) == live(organization)
    assert counted(organization) == 28


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_the_list_total_is_exact_after_concurrent_sends_to_new_numbers():
    """Sending to a new number creates its contact through the same service."""
    organization = OrganizationFactory()
    results = run_concurrently(
        [
            lambda n=n: services.contact_for_phone(
                organization=organization, phone=f"44207948{n % 6:04d}"
            )
            for n in range(18)
        ]
    )
    assert len({contact.pk for contact in results}) == 6
    assert counted(organization) == 6 == live(organization)
