"""An outermost event batch commits in the round trip of its last statements
(events/services.py, messaging_project/core/database.py): what it wrote is committed,
on_commit callbacks run, a COMMIT that fails rolls everything back, and inside an outer
transaction nothing is committed early."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Organization
from events.services import at_batch_end, event_batch

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="one round trip on PostgreSQL"),
]

RENAME = "UPDATE accounts_organization SET name = %s WHERE id = %s"


def test_the_batchs_statements_carry_its_commit(org_a):
    committed, notices = [], []
    connection.ensure_connection()
    connection.connection.add_notice_handler(lambda notice: notices.append(notice.message_primary))
    with CaptureQueriesContext(connection) as queries, event_batch():
        transaction.on_commit(lambda: committed.append(True))
        at_batch_end(RENAME, ["Renamed at the end", org_a.pk])
    # Django logs its own commit as it calls it; psycopg then finds nothing to send.
    ours = [q["sql"] for q in queries.captured_queries if "Renamed at the end" in q["sql"]]
    assert len(ours) == 1 and ours[0].rstrip().endswith(";\nCOMMIT")
    assert committed == [True]
    assert connection.connection.info.transaction_status == 0  # idle: nothing left open
    assert notices == []  # no second COMMIT ("there is no transaction in progress")
    with connection.cursor() as cursor:  # another transaction sees it
        cursor.execute("SELECT name FROM accounts_organization WHERE id = %s", [org_a.pk])
        assert cursor.fetchone()[0] == "Renamed at the end"


def test_a_commit_that_fails_rolls_the_batch_back(org_a):
    """A foreign key is checked at the COMMIT (deferred): its error raises from the batch,
    and nothing of it stays."""
    with pytest.raises(IntegrityError), event_batch():
        Organization.objects.filter(pk=org_a.pk).update(name="Not kept")
        at_batch_end(
            "INSERT INTO accounts_membership (user_id, organization_id, role) VALUES (%s, %s, %s)",
            [987654321, org_a.pk, "manager"],
        )
    org_a.refresh_from_db()
    assert org_a.name != "Not kept"
    Organization.objects.filter(pk=org_a.pk).update(name="Usable again")  # not broken


def test_inside_an_outer_transaction_the_batch_commits_nothing(org_a):
    before = org_a.name
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        with event_batch():
            at_batch_end(RENAME, ["Rolled back with the outer one", org_a.pk])
        transaction.set_rollback(True)
    assert not any(q["sql"].rstrip().endswith(";\nCOMMIT") for q in queries.captured_queries)
    org_a.refresh_from_db()
    assert org_a.name == before
