"""Delivering events: the Emission and Delivery rows are the queue, drained by the
worker processes.

An event is emitted as one Emission row (events/services.py). Before each claim a worker
fans the oldest emissions out: it takes them (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so
two workers never take the same one) and writes one pending delivery per endpoint that
wanted each and still exists, in one transaction, so an emission becomes its deliveries
exactly once. The deliveries keep the emission's time as their `created_at`.

A delivery is due while it is pending, not under way, and its `next_attempt_at` (a
retry's time; none for the first attempt) has come. A worker claims due deliveries
many at once: one UPDATE (the claims serialized by an advisory lock on PostgreSQL, by
the write lock on SQLite, so workers never take the same row) counts the attempt and
sets a lease, `claimed_until`, which is also the claim's token. It takes the due rows in
turns among the organizations (each one's oldest first, then each one's second...), and
never more than WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT under way to one endpoint nor
WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION to one organization, counting every worker's
leases: receivers that never answer hold a few POST slots, never all of them. The
POSTs go out from a pool of threads through libcurl, each thread keeping its connections
alive (messaging_project/core/public_urls.py), outside any transaction;
their outcomes are written by the claim that made them (`claimed_until` unchanged),
the successes in one statement. A worker killed mid-POST leaves its lease to expire
(`2 x WEBHOOK_TIMEOUT + 30` seconds): another worker then claims the same attempt again
and posts it, with the same `webhook-id` (at least once; receivers dedupe).

A failed attempt is retried at `next_attempt_at` per WEBHOOK_RETRY_SCHEDULE, then the
delivery fails. An idle worker looks for due deliveries every POLL seconds: a NOTIFY
from the inserting transaction was measured to cost the web process more (PostgreSQL
serializes the commits that notify) than the look costs the worker.
The worker processes run the queue (`register_queue`, called by events/apps.py).
"""

import logging
import re
import threading
import time
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Min
from django.utils import timezone
from standardwebhooks import Webhook

from events import queries, services
from events.models import Delivery, DeliveryStatus, Emission, Endpoint, new_message_id
from events.services import DISABLE_AFTER, NOT_SENT
from messaging_project.core.deadlines import NETWORK_ERRORS, DeadlineExceeded, deadline
from messaging_project.core.metrics import EVENT_WEBHOOK_DELIVERIES
from messaging_project.core.public_urls import PrivateAddressRefused, request_public

logger = logging.getLogger(__name__)

# How much of a receiver's answer is read: enough for an operator to see what it said.
RESPONSE_CAP = 1024
# How much of an answer is read before the attempt counts as answered; the rest is
# not waited for.
ANSWER_READ_LIMIT = 64 * 1024
USER_AGENT = "messaging-service-webhooks/1"
# POSTs one worker process has under way at once (threads that only wait on the
# network): 200 deliveries a second to a receiver answering in 50 ms keep ~10 busy.
POST_SLOTS = 32
# Deliveries one claim takes at most when run inline (tests, commands).
INLINE_BATCH = 100
# After an answer the worker waits this long, so that the answers of that moment are
# recorded (and the slots they free filled) by one statement each. With every slot
# taken (a backlog) it waits only until they have all answered: waiting the whole time
# left a fast receiver's slots idle for most of it (a slot's turn was its POST plus
# GATHER), while with slots free the gather costs no delivery a slot.
GATHER = 0.02
# How often a worker looks for new emissions and due deliveries (retries come due): a
# DELETE and an indexed UPDATE that find nothing, ten a second each, when idle.
POLL = 0.1
# Emissions one fan-out takes at most (up to ten deliveries each, one INSERT).
FAN_OUT_BATCH = 200
ENDPOINT_ID = re.compile(queries.ENDPOINT_ID)


@dataclass(frozen=True)
class Outcome:
    succeeded: bool
    response_status: int | None = None
    error: str = ""
    final: bool = False  # no later attempt could help (the address is refused)


@dataclass(frozen=True)
class Claimed:
    """One attempt this worker took: the delivery as the claim returned it."""

    pk: int
    endpoint_id: int
    msg_id: str
    event: str
    body: str
    attempt: int
    lease: datetime  # its claimed_until: only this claim records the outcome


def lease() -> timedelta:
    """How long an attempt may take before another worker may assume this one died."""
    return timedelta(seconds=2 * settings.WEBHOOK_TIMEOUT + 30)


def fan_out(limit: int = FAN_OUT_BATCH) -> int:
    """Turn up to `limit` emissions, oldest first, into a pending delivery for each
    endpoint that wanted it and still exists (one that is turned off or deleted gets its
    delivery, which records why it was not sent); how many emissions. One transaction:
    on PostgreSQL one statement (events/queries.py, FAN_OUT_SQL)."""
    if connection.vendor == "postgresql":
        return queries.fan_out_emissions(limit)
    with transaction.atomic():
        emissions = sorted(queries.take_emissions(limit))
        if not emissions:
            return 0
        wanted = {pk for _, endpoints, *_ in emissions for pk in endpoint_ids(endpoints)}
        organizations = dict(
            Endpoint.objects.filter(pk__in=wanted).values_list("pk", "organization_id")
        )
        queries.insert_deliveries(
            [
                (organizations[pk], pk, new_message_id(), event, body, created_at)
                for _, endpoints, event, body, created_at in emissions
                for pk in endpoint_ids(endpoints)
                if pk in organizations
            ]
        )
    return len(emissions)


def endpoint_ids(endpoints: str) -> list[int]:
    """An emission's endpoints: the names that are an ENDPOINT_ID (events/queries.py),
    as FAN_OUT_SQL reads them."""
    return [int(pk) for pk in endpoints.split(",") if ENDPOINT_ID.fullmatch(pk)]


def fan_out_all(stopping: threading.Event | None = None) -> None:
    """fan_out() until no emission is left (a backlog, after the workers were away), or
    until `stopping`."""
    while fan_out() == FAN_OUT_BATCH and not (stopping and stopping.is_set()):
        pass


def claim(limit: int, now: datetime | None = None) -> list[Claimed]:
    """Take up to `limit` due deliveries (first attempts, retries come due, attempts
    whose lease expired) in one statement: in turns among the organizations, within the
    caps on deliveries under way per endpoint and per organization."""
    now = now or timezone.now()
    until = now + lease()
    rows = queries.claim_deliveries(
        limit=limit,
        now=now,
        until=until,
        per_endpoint=settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT,
        per_organization=settings.WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION,
    )
    return [Claimed(*row, lease=until) for row in sorted(rows)]


def endpoints_of(claimed: list[Claimed]) -> dict[int, Endpoint]:
    ids = {item.endpoint_id for item in claimed}
    return {endpoint.pk: endpoint for endpoint in Endpoint.objects.filter(pk__in=ids)}


def signatures(endpoint: Endpoint, msg_id: str, timestamp: datetime, body: str) -> str:
    """The current secret's signature, and during a rotation's overlap the old one's too,
    space-separated as the Standard Webhooks specification allows."""
    signed = [Webhook(endpoint.secret).sign(msg_id, timestamp, body)]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret and expires is not None and expires > timezone.now():
        signed.append(Webhook(endpoint.previous_secret).sign(msg_id, timestamp, body))
    return " ".join(signed)


def post(item: Claimed, endpoint: Endpoint) -> Outcome:
    """One attempt: the signed POST, no redirects, the answer read; all of it within
    WEBHOOK_TIMEOUT (connect, send, the answer's last byte). No database access (it
    runs in a pool thread)."""
    if endpoint.deleted_at is not None or not endpoint.is_active:
        return Outcome(False, error=NOT_SENT, final=True)
    timestamp = datetime.fromtimestamp(int(timezone.now().timestamp()), tz=UTC)
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": item.msg_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": signatures(endpoint, item.msg_id, timestamp, item.body),
    }
    try:
        with deadline(settings.WEBHOOK_TIMEOUT) as bound:
            answer = request_public(
                endpoint.url,
                body=item.body.encode(),
                headers=headers,
                bound=bound,
                keep=RESPONSE_CAP,
                read_limit=ANSWER_READ_LIMIT,
            )
    except PrivateAddressRefused as refused:
        return Outcome(False, error=str(refused), final=True)
    except DeadlineExceeded as error:
        return Outcome(False, error=f"Timeout: {error}")
    except NETWORK_ERRORS as error:
        return Outcome(False, error=f"{type(error).__name__}: {error}"[:1000])
    except Exception as error:  # a bug must not leave the attempt unrecorded
        logger.exception("Event delivery %s: unexpected error", item.msg_id)
        return Outcome(False, error=f"{type(error).__name__}: {error}"[:1000])
    if 200 <= answer.status < 300:
        return Outcome(True, answer.status)
    shown = answer.start.decode("utf-8", "replace").replace("\x00", "")[:RESPONSE_CAP]
    return Outcome(False, answer.status, f"HTTP {answer.status}: {shown}")


def record(results: list[tuple[Claimed, Endpoint | None, Outcome]]) -> dict[int, str]:
    """Write the outcomes of attempts (only where this claim still holds the delivery);
    what became of each. The successes are one statement per response status."""
    now = timezone.now()
    states: dict[int, str] = {}
    succeeded: dict[tuple[int | None, datetime], list[int]] = {}
    recovered: set[int] = set()  # endpoints whose run of failures a success ends
    for item, endpoint, outcome in results:
        if outcome.succeeded:
            succeeded.setdefault((outcome.response_status, item.lease), []).append(item.pk)
            if endpoint is not None and failing(endpoint):
                recovered.add(endpoint.pk)
            states[item.pk] = DeliveryStatus.SUCCEEDED
    for (response_status, until), ids in succeeded.items():
        Delivery.objects.filter(pk__in=ids, claimed_until=until).update(
            status=DeliveryStatus.SUCCEEDED,
            claimed_until=None,
            response_status=response_status,
            last_error="",
            updated_at=now,
        )
        EVENT_WEBHOOK_DELIVERIES.labels(result=DeliveryStatus.SUCCEEDED).inc(len(ids))
    if recovered:  # as read at the claim: a failure recorded since is cleared too
        Endpoint.objects.filter(pk__in=recovered).update(
            failing_since=None, failures_in_a_row=0, open_until=None, times_opened=0
        )
    for item, endpoint, outcome in results:
        if not outcome.succeeded:
            states[item.pk] = record_failure(item, endpoint, outcome, now)
    return states


def record_failure(item: Claimed, endpoint: Endpoint | None, outcome: Outcome, now) -> str:
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    mine = Delivery.objects.filter(pk=item.pk, claimed_until=item.lease)
    fields = {
        "claimed_until": None,
        "response_status": outcome.response_status,
        "last_error": outcome.error,
        "updated_at": now,
    }
    with transaction.atomic():
        if not outcome.final and item.attempt <= len(schedule):
            next_at = now + timedelta(seconds=schedule[item.attempt - 1])
            mine.update(next_attempt_at=next_at, **fields)
            state = "retrying"
        else:
            mine.update(status=DeliveryStatus.FAILED, **fields)
            state = DeliveryStatus.FAILED
        if endpoint is not None and endpoint.is_active and endpoint.deleted_at is None:
            note_failure(endpoint, now)
            back_off(endpoint.pk, now)
    EVENT_WEBHOOK_DELIVERIES.labels(result=state).inc()
    logger.warning(
        "Event delivery %s (%s) attempt %s failed, %s: %s",
        item.msg_id,
        item.event,
        item.attempt,
        state,
        outcome.error,
    )
    return state


def note_failure(endpoint: Endpoint, now: datetime) -> None:
    """Start the endpoint's run of failures, or turn it off when the run is
    DISABLE_AFTER long (services.disable_failing_endpoint). Decided on `failing_since`
    as read at the claim: a run begun since is too young, a run ended since (a success)
    is found by the update's own conditions; so most failures cost one statement or none."""
    if endpoint.failing_since is None:
        Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(
            failing_since=now
        )
    elif endpoint.failing_since <= now - DISABLE_AFTER:
        services.disable_failing_endpoint(endpoint_id=endpoint.pk, now=now)


def failing(endpoint: Endpoint) -> bool:
    """Whether the endpoint, as read at the claim, had failures a success would end."""
    return bool(
        endpoint.failing_since is not None
        or endpoint.failures_in_a_row
        or endpoint.open_until is not None
    )


def back_off(endpoint_id: int, now: datetime) -> None:
    """The circuit breaker (docs/events.md): count the failed attempt; after
    WEBHOOK_BREAKER_FAILURES in a row, back the endpoint off as a whole for the first
    delay of WEBHOOK_BREAKER_BACKOFF (the claim takes none of its deliveries until
    `open_until`, then one at a time). A failure once that time has passed (the probe's)
    backs it off again for the next delay; one while it is backed off (an attempt from
    before) only counts. The endpoint's row is locked (FOR NO KEY UPDATE: the fan-out's
    foreign-key checks still pass), so of failures recorded at once one decides."""
    threshold, delays = settings.WEBHOOK_BREAKER_FAILURES, settings.WEBHOOK_BREAKER_BACKOFF
    row = (
        Endpoint.objects.select_for_update(no_key=True)
        .filter(pk=endpoint_id)
        .values_list("failures_in_a_row", "open_until", "times_opened")
        .first()
    )
    if row is None:
        return
    failures, open_until, times_opened = row
    changes: dict = {"failures_in_a_row": failures + 1}
    opens = open_until is None and threshold and failures + 1 >= threshold
    if delays and (opens or (open_until is not None and open_until <= now)):
        delay = delays[min(times_opened, len(delays) - 1)]
        changes.update(open_until=now + timedelta(seconds=delay), times_opened=times_opened + 1)
    Endpoint.objects.filter(pk=endpoint_id).update(**changes)


def attempt(item: Claimed, endpoint: Endpoint | None) -> Outcome:
    if endpoint is None:  # gone with its organization meanwhile
        return Outcome(False, error=NOT_SENT, final=True)
    return post(item, endpoint)


class DeliveryQueue:
    """The deliveries as one of the worker's queues (messaging_project/worker/queues.py)."""

    name = "event-deliveries"

    def __init__(self, slots: int = POST_SLOTS) -> None:
        self.slots = slots
        self.pool: ThreadPoolExecutor | None = None
        self.pool_lock = threading.Lock()

    def posts(self) -> ThreadPoolExecutor:
        with self.pool_lock:
            if self.pool is None:
                self.pool = ThreadPoolExecutor(self.slots, thread_name_prefix="event-post")
            return self.pool

    def backlog(self) -> str:
        """The events not yet fanned out (a backlog means no worker is taking them up),
        the oldest's age, and the pending deliveries."""
        now = timezone.now()
        waiting = Emission.objects.aggregate(count=Count("id"), oldest=Min("created_at"))
        pending = Delivery.objects.filter(status=DeliveryStatus.PENDING).count()
        line = f"{waiting['count']} event(s) to fan out"
        if waiting["oldest"] is not None:
            line += f", the oldest for {(now - waiting['oldest']).total_seconds():.1f} s"
        return f"{line}; {pending} delivery(ies) pending"

    def run_due(self, worker_id: str = "") -> int:
        """Fan the emissions out, then attempt the due deliveries (up to INLINE_BATCH)
        in this thread, their POSTs together; how many. For tests and commands."""
        fan_out_all()
        claimed = claim(INLINE_BATCH)
        if not claimed:
            return 0
        endpoints = endpoints_of(claimed)
        targets = [endpoints.get(item.endpoint_id) for item in claimed]
        outcomes = list(self.posts().map(attempt, claimed, targets))
        record(list(zip(claimed, targets, outcomes, strict=True)))
        return len(claimed)

    def serve(self, worker_id: str, stopping: threading.Event) -> None:
        """Drain the queue until `stopping` (and the POSTs under way are recorded): fan
        the new emissions out, claim as many due deliveries as there are free slots,
        record the answers as they come, look again every POLL seconds."""
        in_flight: dict[Future, tuple[Claimed, Endpoint | None]] = {}
        wake = threading.Event()  # set by each answer
        failures = 0
        while True:
            wake.clear()
            try:
                done = [future for future in in_flight if future.done()]
                if done:
                    record([(*in_flight.pop(f), f.result()) for f in done])
                if stopping.is_set() and not in_flight:
                    return
                free = self.slots - len(in_flight)
                if not stopping.is_set():
                    fan_out_all(stopping)
                claimed = claim(free) if free and not stopping.is_set() else []
                if claimed:
                    endpoints = endpoints_of(claimed)
                for item in claimed:
                    endpoint = endpoints.get(item.endpoint_id)
                    future = self.posts().submit(attempt, item, endpoint)
                    in_flight[future] = (item, endpoint)
                    future.add_done_callback(lambda _future: wake.set())
                failures = 0
            except DatabaseError:
                # Outcomes not written: those attempts run again after their lease.
                failures += 1
                logger.exception("Event deliveries: the database is unreachable; trying again")
                connection.close()
                stopping.wait(min(30.0, 0.5 * 2**failures))
                continue
            if wake.wait(POLL):  # the answers of this moment
                if len(in_flight) >= self.slots:
                    futures.wait(in_flight, timeout=GATHER)
                else:
                    time.sleep(GATHER)
