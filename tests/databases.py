"""What a test needs of the database it runs on."""

import pytest
from django.db import connection

# SQLite serialises writers, so a race between transactions can only be run on
# PostgreSQL; on SQLite such a test is skipped with this reason.
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs concurrent transactions (PostgreSQL)"
)
