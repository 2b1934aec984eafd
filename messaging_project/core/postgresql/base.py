"""The PostgreSQL backend (django-prometheus's, which counts queries): Django's, with a
persistent connection's health check that costs no round trip while the connection is
well.

Django checks a persistent connection once per request before using it
(CONN_HEALTH_CHECKS) with a `SELECT 1`: a round trip of the database's, one in five of
a status webhook's. An idle connection has nothing to read from its socket; a server
that restarted or terminated the backend sends its goodbye and closes the socket, which
makes it readable. So the check first asks the socket, without waiting, and only when
something arrived asks the server as Django does, which finds out what it was.
"""

import select

from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as CountedWrapper
from psycopg import pq


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
