"""What a test needs of the database it runs on."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# SQLite serialises writers, so a race between transactions can only be run on
# PostgreSQL; on SQLite such a test is skipped with this reason.
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs concurrent transactions (PostgreSQL)"
)


def migrate(targets) -> MigrationExecutor:
    """Migrate the test database to `targets` (app, migration) pairs, or to the latest
    of every app when none: for tests of an upgrade, which go back and forth."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    return executor
