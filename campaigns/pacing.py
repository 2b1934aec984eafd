"""Pacing: at most `rate` campaign messages per second from an organization's number,
however many workers send, counted where they arrive.

Two parts:

- **Turns, shared by every worker.** A schedule in the database (SendPace, one row per
  number): a sender takes the turns of a whole batch at once, each turn one interval
  (1 / rate seconds, and a margin) after the last, and moves `next_at` past them. On
  PostgreSQL that is one UPDATE ... RETURNING per batch, on the database's clock
  (campaigns/queries.py); on SQLite a short transaction that holds the database's write
  lock. So however many worker processes, on however many machines, send from one
  number, their turns never overlap. A sender that comes late gets a turn LEAD from
  then, not a burst of missed turns. When Graph says the number is sending too fast
  (130429, 131056), `next_at` is pushed THROTTLE_PAUSE later, so every sender of that
  number waits.
- **A turn is kept or given up.** A message leaves at its turn or within LEEWAY after
  it, asked at the last moment before its request is written (`on_time`, the gateway's
  `may_write`). Later than that (the process stalled: a pause of the interpreter, a busy
  machine, a slow statement) it does not go: its sender takes it a fresh turn. A late
  message sent anyway would share a second with turns taken for the next one, by this
  worker or any other; a turn given up only lowers the rate.

So each message reaches the channel in [turn, turn + LEEWAY + the moment from the check
to the socket], and `rate` turns span 1 + MARGIN seconds: while that moment stays under
MARGIN - LEEWAY (10 ms), no second holds more than `rate`, in one process or across many.
"""

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from campaigns import queries
from campaigns.models import SendPace

# Graph's throttling codes: the number's throughput, and too many messages to one user.
THROTTLING_CODES = frozenset({130429, 131056})
THROTTLE_PAUSE = timedelta(seconds=2)
# Turns are this much more than 1 / rate apart: `rate` turns span 1.02 s, so a message
# may arrive up to 20 ms after its turn without a second holding `rate + 1`. 2% sends at
# 98% of the rate.
MARGIN = 0.02
# A turn is given at least this far ahead of the clock: the time for its message to
# reach its thread and the socket, so that a batch's first is not late from the start.
LEAD = timedelta(milliseconds=50)
# A sending thread wakes this long before its message's turn, to make its request ready
# meanwhile (on a busy machine that can take several milliseconds), and then waits for
# the turn with the request ready for the socket (`on_time`).
READY = timedelta(milliseconds=20)
# How late after its turn a message may still leave (the check), leaving the rest of
# the margin, 10 ms, for the request to reach the channel from the check.
LEEWAY = timedelta(milliseconds=10)


def ensure_pace(*, number_id: int) -> None:
    """The number's row, so that turns are taken by update only."""
    SendPace.objects.get_or_create(number_id=number_id, defaults={"next_at": timezone.now()})


def interval(rate: int) -> timedelta:
    return timedelta(seconds=(1 + MARGIN) / rate)


def take_turns(*, number_id: int, rate: int, count: int) -> list[datetime]:
    """The moments (LEAD from now or later) at which `count` messages may leave, one
    interval apart, reserved for the caller. The clock is read after the row's lock is
    held, so a turn is never given for a moment already past while waiting for it."""
    step = interval(rate)
    if connection.vendor == "postgresql":
        first = queries.advance_pace(number_id=number_id, span=step * count, lead=LEAD)
        if first is not None:
            return [first + step * n for n in range(count)]
    # SQLite (its transactions begin IMMEDIATE: the write lock is held from the start),
    # or a number whose row was never made (ensure_pace does).
    with transaction.atomic():
        pace = SendPace.objects.select_for_update().filter(number_id=number_id).first()
        soonest = timezone.now() + LEAD
        first = soonest if pace is None else max(pace.next_at, soonest)
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


def wait_for(moment: datetime) -> None:
    """Sleep until `moment`."""
    delay = (moment - timezone.now()).total_seconds()
    if delay > 0:
        time.sleep(delay)


def too_late(turn: datetime) -> bool:
    """Whether a message's turn went by more than LEEWAY ago."""
    return timezone.now() > turn + LEEWAY


def on_time(turn: datetime) -> Callable[[], bool]:
    """The last step before a message is written to the channel (the gateway's
    `may_write`): sleep until its turn if it has not come, then whether the message may
    still leave on it. Asked with the request ready for the socket, so that little comes
    between the answer and the write."""
    last = (turn + LEEWAY).timestamp()

    def may_write() -> bool:
        wait_for(turn)
        return time.time() <= last

    return may_write
