"""Pacing: at most `rate` campaign messages per second from an organization's number,
however many workers send.

Two parts:

- **Turns, shared by every worker.** A schedule in the database (SendPace, one row per
  organization): a sender takes the turns of a whole batch in one short transaction that
  locks the row, each turn one interval (1 / rate seconds, and a margin) after the last,
  and moves `next_at` past them. A sender that comes late gets the present moment, not a
  burst of missed turns. When Graph says the number is sending too fast (130429,
  131056), `next_at` is pushed THROTTLE_PAUSE later, so every sender of that number waits.
- **A gate in each worker process** (`DepartureGate`), just before a message leaves: at
  most `rate` departures of the organization's number within any GATE_WINDOW seconds,
  counted from the moments they actually left. Turns keep the pace; the gate keeps a
  process that stalled (a pause of the interpreter, a slow statement) from sending its
  late messages in a burst that would put more than `rate` into one second.
"""

import threading
import time
from collections import deque
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from campaigns.models import SendPace

# Graph's throttling codes: the number's throughput, and too many messages to one user.
THROTTLING_CODES = frozenset({130429, 131056})
THROTTLE_PAUSE = timedelta(seconds=2)
# Turns are this much more than 1 / rate apart: a message reaches the channel a few
# milliseconds after it leaves, not always the same few, and with turns exactly 1 / rate
# apart one message arriving late could share a second with `rate` others. 2% lets a
# message come up to 20 ms later than the one `rate` places after it, at the cost of
# sending at 98% of the rate (1.5%, 15 ms, let 81 of 80 into a second once in a few
# runs of 10,000: docs/performance.md).
MARGIN = 0.02
# The gate's window: as long as `rate` turns kept on time, so that they pass at once, and
# late ones never catch up faster than the turns would have sent them.
GATE_WINDOW = 1 + MARGIN


def ensure_pace(*, organization_id: int) -> None:
    """The organization's row, so that turns are taken by update only."""
    SendPace.objects.get_or_create(
        organization_id=organization_id, defaults={"next_at": timezone.now()}
    )


def interval(rate: int) -> timedelta:
    return timedelta(seconds=(1 + MARGIN) / rate)


def take_turns(*, organization_id: int, rate: int, count: int) -> list[datetime]:
    """The moments (now or later) at which `count` messages may leave, one interval
    apart, reserved for the caller. The clock is read after the row's lock is held, so a
    turn is never given for a moment already past while waiting for it."""
    step = interval(rate)
    with transaction.atomic():
        pace = SendPace.objects.select_for_update().filter(organization_id=organization_id).first()
        now = timezone.now()
        first = now if pace is None else max(pace.next_at, now)
        turns = [first + step * n for n in range(count)]
        if pace is None:  # an organization whose row was never made (ensure_pace does)
            SendPace.objects.create(organization_id=organization_id, next_at=first + step * count)
        else:
            SendPace.objects.filter(pk=organization_id).update(next_at=first + step * count)
    return turns


def slow_down(*, organization_id: int) -> None:
    """Graph throttled the number: no sender of it sends for THROTTLE_PAUSE."""
    later = timezone.now() + THROTTLE_PAUSE
    SendPace.objects.filter(organization_id=organization_id, next_at__lt=later).update(
        next_at=later
    )


class DepartureGate:
    """At most `rate` departures within any GATE_WINDOW seconds, per organization, in
    this process: `leave()` returns when one more may go, and counts it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.departures: dict[int, deque[float]] = {}

    def leave(self, organization_id: int, rate: int) -> None:
        while True:
            with self.lock:
                recent = self.departures.setdefault(organization_id, deque())
                now = time.monotonic()
                while recent and now - recent[0] >= GATE_WINDOW:
                    recent.popleft()
                if len(recent) < rate:
                    recent.append(now)
                    return
                wait = GATE_WINDOW - (now - recent[0])
            time.sleep(wait)


GATE = DepartureGate()


def leave_at(turn: datetime, *, organization_id: int, rate: int) -> None:
    """Sleep until `turn`, then through the gate: the last thing before a message leaves."""
    delay = (turn - timezone.now()).total_seconds()
    if delay > 0:
        time.sleep(delay)
    GATE.leave(organization_id, rate)
