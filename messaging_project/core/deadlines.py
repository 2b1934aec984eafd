"""Outgoing HTTP calls that always end: a deadline for the whole attempt.

An HTTP client's timeouts bound the connect and each read, not the call: a peer that
answers one byte every few seconds keeps a thread for as long as it likes. Every call the
service makes to a peer it does not control (event webhooks, the Cloud API, media
downloads) runs inside `deadline(seconds)`:

- the timeouts given to urllib3 are clipped to the time left (`Deadline.timeout`);
- the connections of the pools built on `WatchedConnection` register their socket
  with the thread's current deadline; one watchdog thread per process shuts those
  sockets down when it passes, which ends a blocked connect, send or read at once;
- anything the call raised or returned after that is `DeadlineExceeded`, a
  `requests.Timeout`, so callers that map timeouts already map this one.

`stop_all(seconds)` brings every deadline of the process, present and future, to at most
`seconds` from now: the worker calls it on SIGTERM, so that it ends within its graceful
timeout whatever its peers do. (A DNS look-up is not interruptible: it is bounded by the
resolver's own timeouts.)
"""

import collections
import contextlib
import heapq
import itertools
import math
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import requests
import urllib3

STOPPING = "the worker is stopping"
# What a call through urllib3 that got no (whole) answer raises: urllib3's errors and the
# socket's (refused, reset, TLS; a DeadlineExceeded, a requests.Timeout, is an OSError).
NETWORK_ERRORS = (urllib3.exceptions.HTTPError, OSError)
KEYS = itertools.count()


class DeadlineExceeded(requests.Timeout):
    """The whole call took longer than its deadline (or the process is stopping)."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.key = next(KEYS)  # never reused, unlike id(): the watchdog's heap names it
        self.expired = ""  # why it was cut off, once it was
        self.removed = False  # the call ended: the watchdog forgets it
        self.sockets: list[socket.socket] = []

    def ends_at(self) -> float:
        return min(self.at, watchdog.stop_at)

    def remaining(self) -> float:
        return max(0.0, self.ends_at() - time.monotonic())

    def timeout(self, connect: float, read: float) -> urllib3.Timeout:
        """urllib3's connect and read timeouts, neither past the deadline (nor zero,
        which would mean "no timeout" in places). By name: urllib3's first argument is
        a total for the whole call, which would cut the read at the connect timeout."""
        left = max(self.remaining(), 0.001)
        return urllib3.Timeout(connect=min(connect, left), read=min(read, left))

    def check(self) -> None:
        if self.expired or self.remaining() <= 0:
            self.expired = self.expired or self.why()
            raise DeadlineExceeded(self.expired)

    def why(self) -> str:
        if watchdog.stop_at <= self.at:
            return f"Cut off: {STOPPING}."
        return f"No complete answer within {self.seconds:g} s."

    def cut(self) -> None:
        """Shut the registered sockets down: a thread blocked on them returns at once."""
        self.expired = self.expired or self.why()
        for sock in self.sockets:
            # socket.socket's own method: ssl.SSLSocket's would drop its TLS state under
            # the feet of the thread reading it. OSError: closed already.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


class Watchdog:
    """One thread per process that cuts the deadlines as they pass.

    Hundreds of calls a second each add a deadline and remove it, from as many threads:
    under the GIL, a lock they all take becomes a convoy (each hand-over of it waits for
    the GIL behind every runnable thread), and a campaign's sends crawled. So a call
    takes no lock: adding appends to a deque and removing sets a flag, both atomic
    (`collections.deque` is documented thread-safe). The thread alone keeps the
    deadlines in a heap by the moment they end: it takes the new ones in at least every
    RESOLUTION seconds while any is open, so a deadline is cut at most that late (a
    call added while it sleeps with none open wakes it)."""

    RESOLUTION = 0.05

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.added: collections.deque[Deadline] = collections.deque()
        self.due: list[tuple[float, int, Deadline]] = []  # the thread's: (at, key, deadline)
        self.compact_at = 1000  # heap entries past which the removed ones are dropped
        self.idle = False  # the thread sleeps with no deadline open: an addition wakes it
        self.stop_at = math.inf
        self.thread: threading.Thread | None = None

    def add(self, deadline: Deadline) -> None:
        self.added.append(deadline)
        if self.thread is None or self.idle:
            with self.changed:
                if self.thread is None:
                    self.thread = threading.Thread(
                        target=self.run, name="http-deadlines", daemon=True
                    )
                    self.thread.start()
                self.changed.notify()

    def remove(self, deadline: Deadline) -> None:
        deadline.removed = True

    def watch(self, deadline: Deadline, sock: socket.socket) -> None:
        if all(sock is not known for known in deadline.sockets):
            deadline.sockets.append(sock)
        # After the append: a cut that began before it saw the socket or set `expired`
        # first, so one of the two shuts the socket down.
        if deadline.expired:
            deadline.cut()

    def stop_all(self, seconds: float) -> None:
        with self.changed:
            self.stop_at = min(self.stop_at, time.monotonic() + seconds)
            self.changed.notify()

    def run(self) -> None:
        with self.changed:
            while True:
                self.take_added()
                now = time.monotonic()
                while self.due and min(self.due[0][0], self.stop_at) <= now:
                    deadline = heapq.heappop(self.due)[2]
                    if not deadline.removed:
                        deadline.cut()
                while self.due and self.due[0][2].removed:
                    heapq.heappop(self.due)
                if self.due:
                    ends = min(self.due[0][0], self.stop_at)
                    self.changed.wait(min(ends - now, self.RESOLUTION))
                    continue
                self.idle = True
                if not self.added:  # (read after `idle` is set: see add)
                    self.changed.wait()
                self.idle = False

    def take_added(self) -> None:
        while self.added:
            deadline = self.added.popleft()
            if not deadline.removed:
                heapq.heappush(self.due, (deadline.at, deadline.key, deadline))
        if len(self.due) > self.compact_at:  # mostly removed ones: dropped, amortised
            self.due = [entry for entry in self.due if not entry[2].removed]
            heapq.heapify(self.due)
            self.compact_at = max(1000, 2 * len(self.due))

    def forked(self) -> None:
        """In a child process: no thread yet, no deadline of the parent's."""
        self.changed = threading.Condition()
        self.added = collections.deque()
        self.due = []
        self.compact_at = 1000
        self.idle = False
        self.thread = None


watchdog = Watchdog()
os.register_at_fork(after_in_child=watchdog.forked)
current = threading.local()


def stop_all(seconds: float) -> None:
    """Every deadline of this process, now and from now on, ends within `seconds`."""
    watchdog.stop_all(seconds)


@contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """The calls made inside (on WatchedConnection pools) end within `seconds`, all
    together; past it, whatever they raised or returned becomes DeadlineExceeded."""
    outer = getattr(current, "deadline", None)
    bound = Deadline(seconds if outer is None else min(seconds, outer.remaining()))
    current.deadline = bound
    watchdog.add(bound)
    try:
        bound.check()
        yield bound
    except Exception as error:
        if bound.expired or bound.remaining() <= 0:
            bound.expired = bound.expired or bound.why()
            raise DeadlineExceeded(bound.expired) from error
        raise
    finally:
        watchdog.remove(bound)
        current.deadline = outer
    bound.check()  # a read cut short may have looked like the end of the answer


def watch(sock: socket.socket | None) -> None:
    """Cut `sock` at the current deadline, if any."""
    bound = getattr(current, "deadline", None)
    if bound is not None and sock is not None:
        watchdog.watch(bound, sock)


class WatchedConnection:
    """A urllib3 connection mixin: its socket (new, TLS-wrapped, or kept alive from an
    earlier request) is cut at the deadline of the thread using it."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()  # type: ignore[misc]
        watch(sock)
        return sock

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        watch(getattr(self, "sock", None))

    def request(self, *args, **kwargs) -> None:
        watch(getattr(self, "sock", None))
        super().request(*args, **kwargs)  # type: ignore[misc]
