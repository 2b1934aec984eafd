"""Writes that must outlive a lost database connection within the request.

Once WhatsApp has answered a send, what it said has to be written down: a request
that loses it answers an error, and the client's retry would send the message again.
A lost connection (a killed backend, a failover) usually comes back at once, so such
a write reconnects and tries again a few times before it gives up.
"""

import contextlib
import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from messaging_project.api.exceptions import UNAVAILABLE_ERRORS

logger = logging.getLogger(__name__)

# Seconds to wait before each new attempt: a terminated backend or a failover answers
# again at once, a restart within a second or two; the client waits meanwhile.
RECONNECT_DELAYS = (0.0, 0.5, 1.5)

T = TypeVar("T")


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
