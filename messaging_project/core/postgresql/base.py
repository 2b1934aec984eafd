"""The PostgreSQL backend (django-prometheus's, which counts queries): Django's, with a
persistent connection's health check that costs no round trip while the connection is
well.

Django checks a persistent connection once per request before using it
(CONN_HEALTH_CHECKS) with a `SELECT 1`: a round trip of the database's, one in five of
a status webhook's. An idle connection has nothing to read from its socket; a server
that restarted or terminated the backend sends its goodbye and closes the socket, which
makes it readable. So the check first asks the socket, without waiting, and only when
something arrived asks the server as Django does, which finds out what it was.

And a cursor whose parameters PostgreSQL binds, for the one statement where binding them
in Python costs the most for what it does (the status webhook's insert, see
server_bound_cursor).
"""

import functools
import select

import psycopg
from django.conf import settings
from django.db.backends.utils import CursorWrapper
from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as CountedWrapper
from django_prometheus.db.common import ExportingCursorWrapper
from psycopg import pq

# Runs of one statement on a connection before PreparingCursor prepares it (psycopg's
# default threshold).
PREPARE_AFTER = 5


class PreparingCursor(psycopg.Cursor):
    """psycopg's Cursor, which prepares what it runs from its sixth run on the connection
    when the connection goes straight to PostgreSQL (DATABASE_POOLING=none): behind a
    transaction pooler the next run may reach another server connection, and a session
    pooler's reset is not ours to rely on.

    The connection's own threshold stays as Django sets it (None) between runs: with one
    set, psycopg would count every query of Django's client-bound cursors too, keeping
    the text of the last hundred, literals and all, for each connection.
    """

    def execute(self, query, params=None, **kwargs):
        connection = self.connection
        if settings.DATABASE_POOLING != "none" or connection.prepare_threshold is not None:
            return super().execute(query, params, **kwargs)
        connection.prepare_threshold = PREPARE_AFTER
        try:
            return super().execute(query, params, **kwargs)
        finally:
            connection.prepare_threshold = None


@functools.cache
def server_bound_class(alias: str) -> type[psycopg.Cursor]:
    """PreparingCursor, counted as django-prometheus counts Django's cursors."""
    return ExportingCursorWrapper(PreparingCursor, alias, "postgresql")


class DatabaseWrapper(CountedWrapper):
    def is_usable(self) -> bool:
        if self.connection is None:
            return False
        pgconn = self.connection.pgconn
        if pgconn.status != pq.ConnStatus.OK:
            return False
        poll = select.poll()  # not select(): a descriptor may be above FD_SETSIZE
        poll.register(pgconn.socket, select.POLLIN)
        return super().is_usable() if poll.poll(0) else True

    def server_bound_cursor(self) -> CursorWrapper:
        """A cursor as `cursor()` gives (the health check, errors wrapped, queries counted
        and, under DEBUG, logged) whose parameters PostgreSQL binds.

        Django's cursors bind on the client: each parameter quoted and escaped in Python
        into the SQL text, which for the status webhook's JSON was 6% of the web
        process's CPU a webhook. Here they go beside the statement. Straight to
        PostgreSQL a statement is prepared from its sixth run on a connection; behind a
        pooler (DATABASE_POOLING) never, which PgBouncer's transaction mode needs
        (PreparingCursor). One statement an execute; for writes that return no rows
        (Django's cursors load timestamps in its time zone, this one in the
        connection's, and a prepared statement's rows would change shape under it when
        a migration changes their columns).
        """
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            return self._prepare_cursor(server_bound_class(self.alias)(self.connection))
