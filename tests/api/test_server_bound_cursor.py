"""messaging_project.core.database.server_bound_cursor: on PostgreSQL the parameters go
beside the statement and the server binds them; otherwise the cursor is Django's: its
errors, its log of queries, its count in the metrics. CI runs these through PgBouncer's
transaction mode too (`pooled`: they commit)."""

import pytest
from django.conf import settings
from django.db import IntegrityError, ProgrammingError, connection
from django.test.utils import CaptureQueriesContext
from prometheus_client import REGISTRY

from inbound.models import QueuedStatuses
from messaging_project.core.database import server_bound_cursor

pytestmark = pytest.mark.django_db(transaction=True)

INSERT = "INSERT INTO inbound_queuedstatuses (organization_id, changes, received_at, error) "
INSERT += "VALUES (%s, %s, CURRENT_TIMESTAMP, '')"
# What quoting in the client would have to escape, and a placeholder-like percent.
AWKWARD = {"title": 'it\'s "quoted" \\ back; 100%s % done', "emoji": "✅", "nested": [None]}


on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite binds in its C library: nothing to change"
)


def executes() -> float:
    labels = {"alias": "default", "vendor": connection.vendor}
    return REGISTRY.get_sample_value("django_db_execute_total", labels) or 0.0


@on_postgresql
def test_postgresql_binds_the_parameters():
    # Bound by the server, a statement carries no second one (PostgreSQL refuses it);
    # bound in the client, as Django's cursor binds, it does.
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s; SELECT %s", [1, 2])
    with pytest.raises(ProgrammingError), server_bound_cursor() as cursor:
        cursor.execute("SELECT %s; SELECT %s", [1, 2])


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def test_a_json_value_arrives_whole_every_time(org_a):
    changes = QueuedStatuses._meta.get_field("changes").get_db_prep_save([AWKWARD], connection)
    # More times than the five before a statement is prepared: sent unprepared, then
    # prepared (straight to PostgreSQL), then by its name.
    for _ in range(8):
        with server_bound_cursor() as cursor:
            cursor.execute(INSERT, [org_a.pk, changes])
            assert cursor.rowcount == 1
    stored = QueuedStatuses.objects.filter(organization=org_a)
    assert [row.changes for row in stored] == [[AWKWARD]] * 8


def test_it_is_djangos_cursor_for_errors_the_query_log_and_the_metrics(org_a, org_b):
    before = executes()
    with (
        CaptureQueriesContext(connection) as queries,
        pytest.raises(IntegrityError),  # Django's, not the driver's
        server_bound_cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE accounts_organization SET name = %s WHERE id = %s", [org_b.name, org_a.pk]
        )
    assert len(queries.captured_queries) == 1
    assert executes() == before + 1


@on_postgresql
def test_prepared_straight_to_postgresql_never_behind_a_pooler(org_a):
    changes = QueuedStatuses._meta.get_field("changes").get_db_prep_save([AWKWARD], connection)
    for run in range(1, 8):
        with server_bound_cursor() as cursor:
            cursor.execute(INSERT, [org_a.pk, changes])
        prepared = [s for s in prepared_statements() if "inbound_queuedstatuses" in s]
        # Behind a pooler in transaction mode each statement may reach another server
        # connection: none may count on one prepared before.
        expected = 1 if settings.DATABASE_POOLING == "none" and run > 5 else 0
        assert len(prepared) == expected, (run, prepared)
    # Django's own cursors bind on the client and never prepare, nor does psycopg count
    # their queries (and keep their text): the connection's threshold stays Django's.
    assert connection.connection.prepare_threshold is None
    for _ in range(6):
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::int + 1", [1])
    assert not [s for s in prepared_statements() if "::int + 1" in s]
