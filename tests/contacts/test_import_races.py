"""Two imports of the same numbers at once create each contact once (contract section
15). Needs real concurrent transactions: PostgreSQL only, like the other races."""

import pytest

from contacts import importing, imports, tasks
from contacts.models import Contact, ContactImport
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
