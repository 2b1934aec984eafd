"""Database work the ORM does not do: writes that must outlive a lost database
connection within the request, several statements sent at once, and timestamps
loaded by psycopg's compiled loader.

Once WhatsApp has answered a send, what it said has to be written down: a request
that loses it answers an error, and the client's retry would send the message again.
A lost connection (a killed backend, a failover) usually comes back at once, so such
a write reconnects and tries again a few times before it gives up.
"""

import contextlib
import functools
import json
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from datetime import time as time_of_day
from decimal import Decimal
from typing import Any, TypeVar
from uuid import UUID

from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    InterfaceError,
    OperationalError,
    connections,
    transaction,
)
from psycopg import adapters, postgres
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.types.json import Json, Jsonb

logger = logging.getLogger(__name__)

# Seconds to wait before each new attempt: a terminated backend or a failover answers
# again at once, a restart within a second or two; the client waits meanwhile.
RECONNECT_DELAYS = (0.0, 0.5, 1.5)

T = TypeVar("T")

# What a lost connection, a restart or a failover raises (a terminated backend, a
# closed socket, "database is locked"); other database errors stay errors.
UNAVAILABLE_ERRORS = (OperationalError, InterfaceError)


def reconnecting(write: Callable[[], T], *, using: str = DEFAULT_DB_ALIAS) -> T:
    """`write()`, run again on a fresh connection while the database is unavailable.

    `write` must be safe to repeat: an attempt whose answer was lost may have committed.
    Inside a transaction nothing can be repeated, so the error goes on at once, as it
    does after the last attempt.
    """
    connection = connections[using]
    for delay in RECONNECT_DELAYS:
        try:
            return write()
        except UNAVAILABLE_ERRORS as error:
            if connection.in_atomic_block:
                raise
            logger.warning("Database unavailable (%s); reconnecting to write again", error)
            with contextlib.suppress(DatabaseError):
                connection.close()  # the next query opens a new connection
            time.sleep(delay)
    return write()


Statement = tuple[str, Sequence[Any]]  # SQL with %s placeholders, and its parameters


# Lists of values and batches of rows go to PostgreSQL as one parameter each, not as a
# placeholder a value. Django's cursors bind on the client: psycopg splits the statement
# at its placeholders (past 4 KB of text it keeps no split for the next run) and quotes
# each value in Python. Measured with psycopg's client cursor, CPU a statement:
# - 500 message ids: 2.6-3.1 ms as placeholders, 1.7 as one array (500 integer ids:
#   3.4 and 0.7-1.0; both with 0.3 of reading the rows back);
# - 500 rows of a status (12 columns, two of them JSON): 24-28 ms as placeholders, 30-33
#   as one array a column (psycopg escapes each quote of an array's text in Python, and
#   JSON is full of them), 4.6-5.0 as one JSON document, whose quoting libpq does in C;
#   PostgreSQL's part fell too, from about 9.5 ms to 4.5.
# And the statement's text no longer changes with the count: its split is kept.


def among(column: str, values: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> Statement:
    """The condition that `column` is one of `values`, and its parameters: `= ANY(%s)`
    with one array on PostgreSQL, `IN (%s, ...)` elsewhere (false for no values)."""
    if connections[using].vendor == "postgresql":
        return f"{column} = ANY(%s)", [list(values)]
    return f"{column} IN ({', '.join(['%s'] * len(values))})", list(values)


def rows_of(
    types: Sequence[str], rows: Sequence[Sequence[Any]], *, using: str = DEFAULT_DB_ALIAS
) -> Statement:
    """`rows` as a query that yields them, and its parameters, to follow `INSERT INTO t
    (a, b)`, or to stand in `WITH r (a, b) AS (...)` or `IN (...)`. On PostgreSQL the
    rows are one JSON document, each row an array, each value read back as text and cast
    to its column's type (`types`: PostgreSQL's names, without a length: a `varchar(8)`
    cast would cut longer values short where the column refuses them); elsewhere
    `VALUES (%s, %s), ...`. The values are as a field's get_db_prep_save() gives them."""
    if connections[using].vendor == "postgresql":
        columns = ", ".join(f"(row->>{n})::{kind}" for n, kind in enumerate(types))
        document = json.dumps(rows, default=json_text_of)
        return f"SELECT {columns} FROM jsonb_array_elements(%s::jsonb) AS row", [document]
    one = "(" + ", ".join(["%s"] * len(types)) + ")"
    return "VALUES " + ", ".join([one] * len(rows)), [value for row in rows for value in row]


def json_text_of(value: Any) -> str:
    """A prepared value that JSON has no type for, as the text PostgreSQL reads it from: a
    JSON column's value (psycopg's Json wrapper) as the JSON its field would store, a
    time in ISO 8601, a uuid with its dashes."""
    if isinstance(value, Json | Jsonb):
        text = (value.dumps or json.dumps)(value.obj)
        return text.decode() if isinstance(text, bytes) else text
    if isinstance(value, datetime | date | time_of_day):
        return value.isoformat()
    if isinstance(value, UUID | Decimal):
        return str(value)
    raise TypeError(f"No text for a {type(value).__name__} in a row of rows_of()")


@functools.lru_cache(maxsize=64)
def column_types(
    model, names: tuple[str, ...], *, using: str = DEFAULT_DB_ALIAS
) -> tuple[str, ...]:
    """The PostgreSQL types of the columns of `model`'s fields `names`, for rows_of (a
    foreign key's is its target's), worked out once."""
    connection = connections[using]
    fields = [model._meta.get_field(name) for name in names]
    return tuple(field.db_type(connection).split("(")[0] for field in fields)


def insert_statements(
    head: str,
    types: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    per_statement: int = 500,
    using: str = DEFAULT_DB_ALIAS,
) -> list[Statement]:
    """Multi-row INSERTs: `head` ("INSERT INTO t (a, b) ") then the rows (rows_of, of
    `types`), `per_statement` rows at most in each (SQLite binds at most 32,766 values a
    statement); none without rows. For execute_together()."""
    statements = []
    for chunk in (rows[n : n + per_statement] for n in range(0, len(rows), per_statement)):
        source, params = rows_of(types, chunk, using=using)
        statements.append((head + source, params))
    return statements


def sent_together(connection) -> bool:
    """Whether `connection` binds parameters on the client, so that one execute can carry
    several statements (Django's default on PostgreSQL)."""
    binds_on_server = connection.settings_dict["OPTIONS"].get("server_side_binding") is True
    return connection.vendor == "postgresql" and not binds_on_server


def server_bound_cursor(*, using: str = DEFAULT_DB_ALIAS):
    """A cursor whose parameters the database binds: on PostgreSQL the backend's
    (messaging_project/core/postgresql/base.py), Django's own elsewhere (SQLite binds
    them in its C library anyway)."""
    connection = connections[using]
    bound = getattr(connection, "server_bound_cursor", None)
    return bound() if bound is not None else connection.cursor()


def execute_together(
    statements: Sequence[Statement], *, using: str = DEFAULT_DB_ALIAS, last: bool = False
) -> None:
    """Execute `statements` in order, in one round trip on PostgreSQL.

    `last`: nothing more is written before the transaction's end. When that transaction is
    the outermost one, its COMMIT goes in the same round trip; Django's commit on leaving
    the atomic block then finds no transaction open and sends nothing (psycopg skips it),
    and an error of the COMMIT (a deferred constraint) raises here, inside the block,
    which rolls back as for any other.

    A round trip is the dearest part of a short write: on the reference machine a
    trivial statement costs ~0.25 ms of CPU between the two processes, against ~0.04 ms
    for a row more. Django's psycopg cursors bind parameters on
    the client, which lets one execute carry several statements, separated by
    semicolons; with server-side binding (the `server_side_binding` option) PostgreSQL
    refuses that, and they go one by one. So does SQLite, which takes one statement per
    execute, and where a round trip costs nothing anyway. Nothing is returned; an error
    in any statement raises as it would alone, and the caller's transaction decides what
    survives.
    """
    if not statements:
        return
    connection = connections[using]
    with connection.cursor() as cursor:
        if sent_together(connection):
            sql = ";\n".join(sql for sql, _ in statements)
            if last and ends_transaction(connection):
                sql += ";\nCOMMIT"
            cursor.execute(sql, [value for _, params in statements for value in params])
        else:
            for sql, params in statements:
                cursor.execute(sql, params)


@contextlib.contextmanager
def one_snapshot(*, using: str = DEFAULT_DB_ALIAS):
    """A block of reads that all see the database as one moment: a REPEATABLE READ
    transaction on PostgreSQL (where each statement otherwise sees its own moment), a
    transaction elsewhere. Inside a caller's transaction, that transaction's."""
    connection = connections[using]
    outermost = not connection.in_atomic_block
    with transaction.atomic(using=using):
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def ends_transaction(connection) -> bool:
    """Whether the open transaction is one atomic block's own, outermost and not doomed:
    inside an outer block (a test's, a caller's) the commit is not ours to send."""
    return (
        connection.in_atomic_block
        and len(connection.atomic_blocks) == 1
        and not connection.needs_rollback
    )


def fetch_together(
    statements: Sequence[Statement], *, using: str = DEFAULT_DB_ALIAS
) -> list[list[tuple]]:
    """`execute_together` for statements that return rows (SELECT, ... RETURNING): the
    rows of each, in order (none for one that returns none), from one round trip on
    PostgreSQL. A statement sent together runs with its own snapshot, as it would alone,
    so one that follows a lock sees what was committed before the lock was granted."""
    if not statements:
        return []
    connection = connections[using]
    results: list[list[tuple]] = []
    with connection.cursor() as cursor:
        if not sent_together(connection):
            for sql, params in statements:
                cursor.execute(sql, params)
                results.append(cursor.fetchall() if cursor.description else [])
            return results
        cursor.execute(
            ";\n".join(sql for sql, _ in statements),
            [value for _, params in statements for value in params],
        )
        while True:
            # rownumber: None for a result without rows (psycopg's description would
            # build a column object for each column of each result to say so).
            results.append(cursor.fetchall() if cursor.rownumber is not None else [])
            if not cursor.nextset():
                return results


class UTCTimestampLoader(Loader):
    """psycopg's own timestamptz loader (compiled, with psycopg[binary]) under the
    `timezone` Django compares with the connection's before each new cursor."""

    timezone = UTC
    base = adapters.get_loader(postgres.types["timestamptz"].oid, Format.TEXT)

    def __init__(self, oid: int, context: AdaptContext | None = None) -> None:
        super().__init__(oid, context)
        assert self.base is not None
        self._load = self.base(oid, context).load

    def load(self, data: Buffer) -> Any:
        return self._load(data)


def load_timestamps_in_c(sender, connection, **kwargs) -> None:
    """On a new PostgreSQL connection whose session is in UTC, timestamps loaded by
    psycopg's own loader. Django registers one of its own, written in Python, to set
    the time zone it expects: on a page of conversations that was a tenth of the
    request's CPU. In UTC both give the same value, down to its tzinfo
    (`datetime.timezone.utc`); in any other time zone Django's stays."""
    if connection.vendor != "postgresql" or connection.timezone is not UTC:
        return
    raw = connection.connection
    if raw.info.timezone is UTC:
        raw.adapters.register_loader("timestamptz", UTCTimestampLoader)
