"""Pacing: at most `rate` campaign messages per second from an organization's number,
however many workers send.

A shared schedule of turns in the database (SendPace, one row per organization): a
sender takes the next turn in a short transaction that locks the row, moving `next_at`
one interval (1 / rate seconds, and a margin) on, and sleeps until its turn. Turns are at least one
interval apart, so no one-second window holds more than `rate` of them; a sender that
comes late gets the present moment, not a burst of missed turns. When Graph says the
number is sending too fast (130429, 131056), `next_at` is pushed THROTTLE_PAUSE later,
so every sender of that number waits.
"""

import time
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from campaigns.models import SendPace

# Graph's throttling codes: the number's throughput, and too many messages to one user.
THROTTLING_CODES = frozenset({130429, 131056})
THROTTLE_PAUSE = timedelta(seconds=2)
# Turns are this much more than 1 / rate apart: a message leaves a few milliseconds after
# its turn (a thread waking, the request being written), and with turns exactly 1 / rate
# apart one late message could share a second with `rate` others. 2.5% absorbs a delay
# of up to 25 ms in any second, at the cost of sending at 97.6% of the rate.
MARGIN = 0.025


def ensure_pace(*, organization_id: int) -> None:
    """The organization's row, so that turns are taken by update only."""
    SendPace.objects.get_or_create(
        organization_id=organization_id, defaults={"next_at": timezone.now()}
    )


def take_turn(*, organization_id: int, rate: int) -> datetime:
    """The moment this sender may send (now or later), reserved for it."""
    interval = timedelta(seconds=(1 + MARGIN) / rate)
    with transaction.atomic():
        pace = SendPace.objects.select_for_update().filter(organization_id=organization_id).first()
        now = timezone.now()
        if pace is None:  # an organization whose row was never made (ensure_pace does)
            SendPace.objects.create(organization_id=organization_id, next_at=now + interval)
            return now
        turn = max(pace.next_at, now)
        SendPace.objects.filter(pk=organization_id).update(next_at=turn + interval)
    return turn


def wait_for_turn(*, organization_id: int, rate: int) -> None:
    turn = take_turn(organization_id=organization_id, rate=rate)
    delay = (turn - timezone.now()).total_seconds()
    if delay > 0:
        time.sleep(delay)


def slow_down(*, organization_id: int) -> None:
    """Graph throttled the number: no sender of it sends for THROTTLE_PAUSE."""
    later = timezone.now() + THROTTLE_PAUSE
    SendPace.objects.filter(organization_id=organization_id, next_at__lt=later).update(
        next_at=later
    )
