"""Two imports of the same numbers at once create each contact once (docs/contacts.md). Needs real concurrent transactions: PostgreSQL only, like the other races."""

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.files import File

from contacts import importing, imports, services, tasks
from contacts.models import Contact, ContactBlock, ContactImport
from tests.contacts.test_contact_counter import counted, on_postgresql, run_concurrently
from tests.factories import OrganizationFactory

NUMBERS = 1500


def csv_of(numbers) -> bytes:
    return ("phone,first_name\n" + "".join(f"+44207946{n:04d},N{n}\n" for n in numbers)).encode()


@on_postgresql
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("on_duplicate", ["skip", "update"])
def test_concurrent_imports_of_the_same_numbers_create_no_duplicates(on_duplicate):
    organization = OrganizationFactory()
    forward = imports.csv_rows(csv_of(range(NUMBERS)))
    backward = imports.csv_rows(csv_of(reversed(range(NUMBERS))))  # the other order
    started = [
        tasks.start_contact_import(organization=organization, rows=rows, on_duplicate=on_duplicate)
        for rows in (forward, backward, forward)
    ]
    results = run_concurrently(
        [lambda pk=one.pk: importing.run_contact_import(import_id=pk) for one in started]
    )
    assert results == ["completed"] * 3
    phones = list(
        Contact.objects.live().filter(organization=organization).values_list("phone", flat=True)
    )
    assert len(phones) == len(set(phones)) == NUMBERS
    done = list(ContactImport.objects.filter(pk__in=[one.pk for one in started]))
    assert sum(one.created for one in done) == NUMBERS
    for one in done:
        assert one.created + one.updated + one.skipped == NUMBERS
        assert one.failed == 0
    assert counted(organization) == NUMBERS


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_six_imports_of_one_file_beside_single_creates_all_complete_with_exact_totals():
    # Six imports of one file into a fresh organization (no counter rows yet), while
    # single creates add numbers of the same file: each import took the total's row
    # before its insert, which then waited for a single create's number, which waited
    # for the total: deadlocks, imports ended failed and creates answered 503.
    organization = OrganizationFactory()
    file = csv_of(range(NUMBERS))
    started = [
        tasks.start_contact_import(
            organization=organization,
            file=imports.checked_file(File(io.BytesIO(file), name="contacts.csv")),
        )
        for _ in range(6)
    ]
    singles = [range(n, NUMBERS, 97) for n in range(0, 97, 24)]  # 4 writers, ~60 numbers

    def create_each(numbers):
        made = 0
        for n in numbers:
            try:
                services.create_contact(
                    organization=organization, phone=f"44207946{n:04d}", first_name="S"
                )
                made += 1
            except ValidationError:  # the number an import created first
                pass
        return made

    results = run_concurrently(
        [lambda pk=one.pk: importing.run_contact_import(import_id=pk) for one in started]
        + [lambda numbers=numbers: create_each(numbers) for numbers in singles]
    )
    assert results[:6] == ["completed"] * 6
    done = list(ContactImport.objects.filter(pk__in=[one.pk for one in started]))
    assert sum(one.created for one in done) + sum(results[6:]) == NUMBERS
    for one in done:
        assert (one.total, one.processed, one.failed) == (NUMBERS, NUMBERS, 0)
        assert one.created + one.skipped == NUMBERS
    assert Contact.objects.live().filter(organization=organization).count() == NUMBERS
    assert counted(organization) == NUMBERS
    blocks = ContactBlock.objects.filter(organization=organization).exclude(block=-1)
    assert sum(blocks.values_list("live", flat=True)) == NUMBERS
