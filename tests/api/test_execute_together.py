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


# Lists of values as arrays (PostgreSQL) or placeholders (elsewhere): every value comes
# back as it went, whatever an array literal would need quoted.
AWKWARD = [
    'a "quoted" {braced}, with a comma',
    "back\\slash",
    "NULL",
    "",
    None,
    "  spaced  ",
    "\u00f1\u20ac\U0001f600",
    "{}",
]


@pytest.fixture
def table():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE listed (n bigint, word text, at timestamptz)")
    yield "listed"
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE listed")


def test_rows_of_inserts_every_value_as_given_and_in_order(table):
    from django.utils import timezone

    from messaging_project.core.database import insert_statements

    now = connection.ops.adapt_datetimefield_value(timezone.now())
    rows = [(n, word, now if n % 2 else None) for n, word in enumerate(AWKWARD)]
    statements = insert_statements(
        f"INSERT INTO {table} (n, word, at) ", ["bigint", "text", "timestamptz"], rows,
        per_statement=3,
    )  # fmt: skip
    assert len(statements) == 3
    execute_together(statements)

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT n, word, at IS NULL FROM {table} ORDER BY n")  # noqa: S608
        assert cursor.fetchall() == [(n, word, n % 2 == 0) for n, word, _ in rows]
    assert insert_statements("INSERT INTO t (a) ", ["bigint"], []) == []


def test_rows_of_carries_json_as_its_field_would_store_it():
    """A JSON column's value comes back as it went, quotes and all; None is SQL's NULL."""
    import json

    from messaging_project.core.database import rows_of
    from sending.models import ChatStatusEvent

    field = ChatStatusEvent._meta.get_field("pricing")
    documents = [{"say": 'a "quoted" {word}', "n": [1, 2.5, None]}, [], "text", None]
    prepared = [(n, field.get_db_prep_save(doc, connection)) for n, doc in enumerate(documents)]
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE documents (n bigint, doc jsonb)")
        source, params = rows_of(["bigint", "jsonb"], prepared)
        cursor.execute(f"INSERT INTO documents (n, doc) {source}", params)  # noqa: S608
        cursor.execute("SELECT doc FROM documents ORDER BY n")
        stored = [doc for (doc,) in cursor.fetchall()]
        cursor.execute("DROP TABLE documents")
    # Read as text on both databases (Django's JSONField parses it).
    assert [None if doc is None else json.loads(doc) for doc in stored] == documents


def test_among_finds_exactly_the_values_named(table):
    from messaging_project.core.database import among, rows_of

    source, params = rows_of(["bigint", "text"], [(n, w) for n, w in enumerate(AWKWARD)])
    execute_together([(f"INSERT INTO {table} (n, word) {source}", params)])

    def found(values):
        condition, params = among("word", values)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT n FROM {table} WHERE {condition} ORDER BY n", params)  # noqa: S608
            return [n for (n,) in cursor.fetchall()]

    named = [word for word in AWKWARD if word is not None]
    assert found(named) == [n for n, word in enumerate(AWKWARD) if word is not None]
    assert found(["NULL"]) == [AWKWARD.index("NULL")]  # the word, not SQL's NULL
    assert found(["{}", "missing"]) == [AWKWARD.index("{}")]
    assert found([]) == []


def test_a_list_is_one_parameter_on_postgresql():
    from messaging_project.core.database import among

    condition, params = among("id", [1, 2, 3])
    if connection.vendor == "postgresql":
        assert (condition, params) == ("id = ANY(%s)", [[1, 2, 3]])
    else:
        assert (condition, params) == ("id IN (%s, %s, %s)", [1, 2, 3])


def test_with_server_side_binding_the_statements_go_one_by_one(org_a, monkeypatch):
    """PostgreSQL refuses several statements in one execute whose parameters it binds
    itself: with that option on, execute_together sends them one at a time."""
    options = {**connection.settings_dict["OPTIONS"], "server_side_binding": True}
    monkeypatch.setitem(connection.settings_dict, "OPTIONS", options)
    with CaptureQueriesContext(connection) as queries:
        execute_together([(RENAME, ["One", org_a.pk]), (RENAME, ["Two", org_a.pk])])
    assert len(queries.captured_queries) == 2
    assert Organization.objects.get(pk=org_a.pk).name == "Two"
