"""Pacing: at most `rate` campaign messages per second from an organization's number,
however many workers send.

Two parts:

- **Turns, shared by every worker.** A schedule in the database (SendPace, one row per
  number): a sender takes the turns of a whole batch at once, each turn one interval
  (1 / rate seconds, and a margin) after the last, and moves `next_at` past them. On
  PostgreSQL that is one UPDATE ... RETURNING per batch, on the database's clock
  (campaigns/queries.py); on SQLite a short transaction that holds the database's write
  lock. So however many worker processes, on however many machines, send from one
  number, their turns never overlap. A sender that comes late gets the present moment,
  not a burst of missed turns. When Graph says the number is sending too fast (130429,
  131056), `next_at` is pushed THROTTLE_PAUSE later, so every sender of that number waits.
- **A gate in each worker process** (`DepartureGate`), just before a message leaves: at
  most `rate` departures of the organization's number within any GATE_WINDOW seconds,
  counted from the moments they were written to the channel. Turns keep the pace; the
  gate keeps a process that stalled (a pause of the interpreter, a slow statement) from
  sending its late messages in a burst that would put more than `rate` into one second.
"""

import threading
import time
from collections import deque
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from campaigns import queries
from campaigns.models import SendPace

# Graph's throttling codes: the number's throughput, and too many messages to one user.
THROTTLING_CODES = frozenset({130429, 131056})
THROTTLE_PAUSE = timedelta(seconds=2)
# Turns are this much more than 1 / rate apart, so that `rate` turns span 1.02 s, 10 ms
# more than the gate's window below. So a message held late (a pause of the process)
# holds its successor `rate` places later 10 ms less, and lateness fades instead of
# being handed on for good; and a message may reach the channel up to 10 ms later,
# after it was written, than the one `rate` places after it without the two sharing a
# second. 2% sends at 98% of the rate.
MARGIN = 0.02
# The gate's window, counted from the moment each message was written to the channel.
GATE_WINDOW = 1.01
# How often a gate held by a message not yet written looks again, in seconds.
GATE_POLL = 0.001


def ensure_pace(*, number_id: int) -> None:
    """The number's row, so that turns are taken by update only."""
    SendPace.objects.get_or_create(number_id=number_id, defaults={"next_at": timezone.now()})


def interval(rate: int) -> timedelta:
    return timedelta(seconds=(1 + MARGIN) / rate)


def take_turns(*, number_id: int, rate: int, count: int) -> list[datetime]:
    """The moments (now or later) at which `count` messages may leave, one interval
    apart, reserved for the caller. The clock is read after the row's lock is held, so a
    turn is never given for a moment already past while waiting for it."""
    step = interval(rate)
    if connection.vendor == "postgresql":
        first = queries.advance_pace(number_id=number_id, span=step * count)
        if first is not None:
            return [first + step * n for n in range(count)]
    # SQLite (its transactions begin IMMEDIATE: the write lock is held from the start),
    # or a number whose row was never made (ensure_pace does).
    with transaction.atomic():
        pace = SendPace.objects.select_for_update().filter(number_id=number_id).first()
        now = timezone.now()
        first = now if pace is None else max(pace.next_at, now)
        turns = [first + step * n for n in range(count)]
        if pace is None:
            SendPace.objects.create(number_id=number_id, next_at=first + step * count)
        else:
            SendPace.objects.filter(pk=number_id).update(next_at=first + step * count)
    return turns


def slow_down(*, number_id: int) -> None:
    """Graph throttled the number: no sender of it sends for THROTTLE_PAUSE."""
    later = timezone.now() + THROTTLE_PAUSE
    SendPace.objects.filter(number_id=number_id, next_at__lt=later).update(next_at=later)


class Departure:
    """A message through the gate: counted from the moment it passed until it is
    written to the channel, then from that moment."""

    __slots__ = ("at", "settled")

    def __init__(self, at: float) -> None:
        self.at, self.settled = at, False


class DepartureGate:
    """At most `rate` departures within any GATE_WINDOW seconds, per number, in
    this process: `leave()` returns when one more may go, and counts it; `written()`
    moves its count to when it was written to the channel (under load a thread may take
    several milliseconds from the gate to the socket, and the channel counts there);
    `settle()` ends its wait for that (never written, or written unseen: the moment it
    passed counts)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.departures: dict[int, deque[Departure]] = {}

    def leave(self, number_id: int, rate: int) -> Departure:
        while True:
            with self.lock:
                recent = self.departures.setdefault(number_id, deque())
                now = time.monotonic()
                while recent and recent[0].settled and now - recent[0].at >= GATE_WINDOW:
                    recent.popleft()
                if len(recent) < rate:
                    departure = Departure(now)
                    recent.append(departure)
                    return departure
                oldest = recent[0]
                wait = GATE_WINDOW - (now - oldest.at) if oldest.settled else GATE_POLL
            time.sleep(wait)

    def written(self, departure: Departure) -> None:
        with self.lock:
            departure.at, departure.settled = time.monotonic(), True

    def settle(self, departure: Departure) -> None:
        with self.lock:
            departure.settled = True


GATE = DepartureGate()


def leave_at(turn: datetime, *, number_id: int, rate: int) -> Departure:
    """Sleep until `turn`, then through the gate: the last thing before a message leaves."""
    delay = (turn - timezone.now()).total_seconds()
    if delay > 0:
        time.sleep(delay)
    return GATE.leave(number_id, rate)
