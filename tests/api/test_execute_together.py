"""messaging_project.core.database.execute_together: several statements, one round trip
on PostgreSQL, in order, failing as one."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Organization
from messaging_project.core.database import execute_together

# CI runs them through PgBouncer too (`pooled`): several statements in one round trip.
pytestmark = [pytest.mark.django_db, pytest.mark.pooled]

RENAME = "UPDATE accounts_organization SET name = %s WHERE id = %s"


def test_statements_run_in_order_in_one_round_trip_on_postgresql(org_a):
    with CaptureQueriesContext(connection) as queries:
        execute_together(
            [(RENAME, ["First; with a semicolon", org_a.pk]), (RENAME, ["Second 100%", org_a.pk])]
        )
    org_a.refresh_from_db()
    assert org_a.name == "Second 100%"  # the later statement ran last
    expected = 1 if connection.vendor == "postgresql" else 2
    assert len(queries.captured_queries) == expected


def test_a_failing_statement_fails_the_call_and_the_transaction_keeps_nothing(org_a, org_b):
    with pytest.raises(DatabaseError), transaction.atomic():
        execute_together(
            [
                (RENAME, ["Renamed", org_a.pk]),
                (RENAME, [org_b.name, org_a.pk]),  # the unique name of another organization
            ]
        )
    assert Organization.objects.get(pk=org_a.pk).name == org_a.name


def test_no_statements_send_nothing():
    with CaptureQueriesContext(connection) as queries:
        execute_together([])
    assert queries.captured_queries == []


def test_insert_statements_split_the_rows_and_keep_their_order():
    from messaging_project.core.database import insert_statements

    head = "INSERT INTO t (a, b) VALUES "
    statements = insert_statements(head, "(%s, %s)", [(1, 2), (3, 4), (5, 6)], per_statement=2)
    assert statements == [
        (head + "(%s, %s), (%s, %s)", [1, 2, 3, 4]),
        (head + "(%s, %s)", [5, 6]),
    ]
    assert insert_statements(head, "(%s, %s)", []) == []


def test_with_server_side_binding_the_statements_go_one_by_one(org_a, monkeypatch):
    """PostgreSQL refuses several statements in one execute whose parameters it binds
    itself: with that option on, execute_together sends them one at a time."""
    options = {**connection.settings_dict["OPTIONS"], "server_side_binding": True}
    monkeypatch.setitem(connection.settings_dict, "OPTIONS", options)
    with CaptureQueriesContext(connection) as queries:
        execute_together([(RENAME, ["One", org_a.pk]), (RENAME, ["Two", org_a.pk])])
    assert len(queries.captured_queries) == 2
    assert Organization.objects.get(pk=org_a.pk).name == "Two"
