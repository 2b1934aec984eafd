"""Outgoing HTTP calls that always end: a deadline for the whole attempt.

requests' `timeout` bounds the connect and each read, not the call: a peer that answers
one byte every few seconds keeps a thread for as long as it likes. Every call the
service makes to a peer it does not control (event webhooks, the Cloud API, media
downloads) runs inside `deadline(seconds)`:

- the timeouts given to requests are clipped to the time left (`Deadline.timeouts`);
- the connections of the sessions built on `WatchedConnection` register their socket
  with the thread's current deadline; one watchdog thread per process shuts those
  sockets down when it passes, which ends a blocked connect, send or read at once;
- anything the call raised or returned after that is `DeadlineExceeded`, a
  `requests.Timeout`, so callers that map timeouts already map this one.

`stop_all(seconds)` brings every deadline of the process, present and future, to at most
`seconds` from now: the worker calls it on SIGTERM, so that it ends within its graceful
timeout whatever its peers do. (A DNS look-up is not interruptible: it is bounded by the
resolver's own timeouts.)
"""

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

STOPPING = "the worker is stopping"
KEYS = itertools.count()


class DeadlineExceeded(requests.Timeout):
    """The whole call took longer than its deadline (or the process is stopping)."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.key = next(KEYS)  # never reused, unlike id(): the watchdog's heap names it
        self.expired = ""  # why it was cut off, once it was
        self.sockets: list[socket.socket] = []

    def ends_at(self) -> float:
        return min(self.at, watchdog.stop_at)

    def remaining(self) -> float:
        return max(0.0, self.ends_at() - time.monotonic())

    def timeouts(self, connect: float, read: float) -> tuple[float, float]:
        """requests' (connect, read) timeouts, neither past the deadline (nor zero,
        which requests would take for "no timeout" in places)."""
        left = max(self.remaining(), 0.001)
        return min(connect, left), min(read, left)

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

    The deadlines wait in a heap by the moment they end, so that a call adds and removes
    its own in constant or logarithmic time, and the thread wakes only for the earliest
    one (a new deadline that ends first, or stop_all, wakes it sooner). A removed
    deadline's entry stays in the heap until it comes up (or the heap is rebuilt):
    hundreds of sends a second each add one, and the thread once read them all on each
    of their additions, holding the lock every call needs."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.active: dict[int, Deadline] = {}
        self.due: list[tuple[float, int]] = []  # (Deadline.at, Deadline.key)
        self.stop_at = math.inf
        self.thread: threading.Thread | None = None

    def add(self, deadline: Deadline) -> None:
        with self.changed:
            self.active[deadline.key] = deadline
            if len(self.due) > 2 * len(self.active) + 1000:  # mostly removed ones
                self.due = [(d.at, key) for key, d in self.active.items()]
                heapq.heapify(self.due)
            else:
                heapq.heappush(self.due, (deadline.at, deadline.key))
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, name="http-deadlines", daemon=True)
                self.thread.start()
            elif self.due[0][1] == deadline.key:  # ends before any other
                self.changed.notify()

    def remove(self, deadline: Deadline) -> None:
        with self.changed:
            self.active.pop(deadline.key, None)

    def watch(self, deadline: Deadline, sock: socket.socket) -> None:
        with self.changed:
            if all(sock is not known for known in deadline.sockets):
                deadline.sockets.append(sock)
            if deadline.expired:
                deadline.cut()

    def stop_all(self, seconds: float) -> None:
        with self.changed:
            self.stop_at = min(self.stop_at, time.monotonic() + seconds)
            self.changed.notify()

    def run(self) -> None:
        with self.changed:
            while True:
                now = time.monotonic()
                while self.due:
                    at, key = self.due[0]
                    if key in self.active and min(at, self.stop_at) > now:
                        break
                    heapq.heappop(self.due)
                    if key in self.active:
                        self.active.pop(key).cut()
                self.changed.wait(min(self.due[0][0], self.stop_at) - now if self.due else None)

    def forked(self) -> None:
        """In a child process: no thread yet, no deadline of the parent's."""
        self.changed = threading.Condition()
        self.active = {}
        self.due = []
        self.thread = None


watchdog = Watchdog()
os.register_at_fork(after_in_child=watchdog.forked)
current = threading.local()


def stop_all(seconds: float) -> None:
    """Every deadline of this process, now and from now on, ends within `seconds`."""
    watchdog.stop_all(seconds)


@contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """The calls made inside (on WatchedConnection sessions) end within `seconds`, all
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
