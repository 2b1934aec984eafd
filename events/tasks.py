"""Delivering an event to an endpoint: one task per attempt.

An emission's first attempts are one task (`deliver_events`, the POSTs made together);
each retry is a task of its own (`deliver_event`). Tasks run at least once, so an
attempt is claimed before anything is posted: a
conditional update moves the delivery from `attempts = n - 1` to `n` and sets a lease
(`claimed_until`). Another run of the same attempt while the lease holds, or after the
attempt was recorded, posts nothing. A run after the lease expired means the first run's
worker died mid-attempt: it posts again (the receiver may get the event twice; it
dedupes on `webhook-id`, docs/events.md).

The network call is made outside any transaction; its outcome is recorded, and the
next attempt enqueued with `run_after` (WEBHOOK_RETRY_SCHEDULE), in one transaction.
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import requests
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_tasks import task
from standardwebhooks import Webhook

from events.models import Delivery, DeliveryStatus, Endpoint
from messaging_project.api.metrics import EVENT_WEBHOOK_DELIVERIES
from messaging_project.api.public_urls import PrivateAddressRefused, public_session
from messaging_project.api.schedule import every

logger = logging.getLogger(__name__)

# How much of a receiver's answer is read: enough for an operator to see what it said.
RESPONSE_CAP = 1024
# An endpoint whose every attempt failed for this long is turned off.
DISABLE_AFTER = timedelta(days=5)
USER_AGENT = "messaging-service-webhooks/1"
# The POSTs of one emission go out together, at most this many at once per worker
# process (threads that only talk to the network).
POSTS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="event-post")
# Finished deliveries are kept this long for the deliveries list and the admin.
DELIVERIES_KEPT = timedelta(days=30)


@dataclass(frozen=True)
class Outcome:
    succeeded: bool
    response_status: int | None = None
    error: str = ""
    final: bool = False  # no later attempt could help (the address is refused)


def lease() -> timedelta:
    """How long an attempt may take before another run may assume its worker died."""
    return timedelta(seconds=2 * settings.WEBHOOK_TIMEOUT + 30)


def signatures(endpoint: Endpoint, msg_id: str, timestamp: datetime, body: str) -> str:
    """The current secret's signature, and during a rotation's overlap the old one's too,
    space-separated as the Standard Webhooks specification allows."""
    signed = [Webhook(endpoint.secret).sign(msg_id, timestamp, body)]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret and expires is not None and expires > timezone.now():
        signed.append(Webhook(endpoint.previous_secret).sign(msg_id, timestamp, body))
    return " ".join(signed)


local = threading.local()


def session() -> requests.Session:
    """This thread's session (the public-address rule on every new connection): its
    connections are kept alive between deliveries to the same endpoint."""
    if getattr(local, "session", None) is None:
        local.session = public_session()
    return local.session


def post(delivery: Delivery, endpoint: Endpoint) -> Outcome:
    """One attempt: the signed POST, no redirects, timeouts, the answer read up to a cap."""
    timestamp = datetime.fromtimestamp(int(timezone.now().timestamp()), tz=UTC)
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": delivery.msg_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": signatures(endpoint, delivery.msg_id, timestamp, delivery.body),
    }
    timeout = settings.WEBHOOK_TIMEOUT
    try:
        response = session().post(
            endpoint.url,
            data=delivery.body.encode(),
            headers=headers,
            timeout=(timeout, timeout),
            allow_redirects=False,
            stream=True,
        )
        with response:
            answer = next(response.iter_content(RESPONSE_CAP), b"")
    except PrivateAddressRefused as refused:
        return Outcome(False, error=str(refused), final=True)
    except requests.RequestException as error:
        return Outcome(False, error=f"{type(error).__name__}: {error}"[:1000])
    if 200 <= response.status_code < 300:
        return Outcome(True, response.status_code)
    shown = answer.decode("utf-8", "replace").replace("\x00", "")[:RESPONSE_CAP]
    return Outcome(False, response.status_code, f"HTTP {response.status_code}: {shown}")


def claim(delivery_id: int, attempt: int, now: datetime) -> bool:
    """Take attempt `attempt` of a delivery for this run (conditional update)."""
    return bool(
        Delivery.objects.filter(pk=delivery_id, status=DeliveryStatus.PENDING)
        .filter(
            Q(attempts=attempt - 1, claimed_until__isnull=True)
            | Q(attempts=attempt, claimed_until__lt=now)
        )
        .update(attempts=attempt, claimed_until=now + lease(), next_attempt_at=None, updated_at=now)
    )


def attempt_of(delivery: Delivery) -> Outcome:
    """The network part of an attempt: no database access (it may run in a pool thread)."""
    endpoint = delivery.endpoint
    if endpoint.deleted_at is not None or not endpoint.is_active:
        return Outcome(False, error="The endpoint was deleted or turned off.", final=True)
    return post(delivery, endpoint)


def attempt_all(delivery_ids: list[int], attempt: int) -> dict[int, str]:
    """Attempt `attempt` of each delivery this run can claim; what became of each. The
    POSTs go out together (a slow endpoint does not hold up the others), outside any
    transaction."""
    now = timezone.now()
    claimed = [pk for pk in delivery_ids if claim(pk, attempt, now)]
    states = dict.fromkeys(delivery_ids, "not claimed")  # another run has or had it
    if not claimed:
        return states
    deliveries = list(Delivery.objects.select_related("endpoint").filter(pk__in=claimed))
    if len(deliveries) == 1:
        outcomes = [attempt_of(deliveries[0])]
    else:
        outcomes = list(POSTS.map(attempt_of, deliveries))
    for delivery, outcome in zip(deliveries, outcomes, strict=True):
        states[delivery.pk] = record(delivery, attempt, outcome)
    return states


@task()
def deliver_event(delivery_id: int, attempt: int) -> str:
    """Attempt `attempt` of one delivery (a retry, or "send again"); what became of it."""
    return attempt_all([delivery_id], attempt)[delivery_id]


@task()
def deliver_events(delivery_ids: list[int]) -> dict[str, str]:
    """The first attempt of an emission's deliveries (every endpoint, every object): one
    task for them all, so that an event costs the worker one task, not one per endpoint.
    Each delivery's retries are tasks of their own (deliver_event)."""
    return {str(pk): state for pk, state in attempt_all(delivery_ids, 1).items()}


def record(delivery: Delivery, attempt: int, outcome: Outcome) -> str:
    now = timezone.now()
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    # Only the run that owns this attempt records it.
    mine = Delivery.objects.filter(pk=delivery.pk, attempts=attempt, status=DeliveryStatus.PENDING)
    fields = {
        "claimed_until": None,
        "response_status": outcome.response_status,
        "last_error": outcome.error,
        "updated_at": now,
    }
    if outcome.succeeded:  # one statement, the common case
        mine.update(status=DeliveryStatus.SUCCEEDED, **fields)
        # The run of failures ends; as read at the claim: a failure recorded since then
        # is cleared by the next success.
        if delivery.endpoint.failing_since is not None:
            Endpoint.objects.filter(pk=delivery.endpoint_id).update(failing_since=None)
        EVENT_WEBHOOK_DELIVERIES.labels(result=DeliveryStatus.SUCCEEDED).inc()
        return DeliveryStatus.SUCCEEDED
    with transaction.atomic():
        if not outcome.final and attempt <= len(schedule):
            next_at = now + timedelta(seconds=schedule[attempt - 1])
            if mine.update(next_attempt_at=next_at, **fields):
                deliver_event.using(run_after=next_at).enqueue(delivery.pk, attempt + 1)
            state = "retrying"
        else:
            mine.update(status=DeliveryStatus.FAILED, **fields)
            state = DeliveryStatus.FAILED
        if delivery.endpoint.is_active and delivery.endpoint.deleted_at is None:
            note_failure(delivery.endpoint_id, now)
    EVENT_WEBHOOK_DELIVERIES.labels(result=state).inc()
    logger.warning(
        "Event delivery %s (%s) attempt %s failed, %s: %s",
        delivery.msg_id,
        delivery.event,
        attempt,
        state,
        outcome.error,
    )
    return state


def note_failure(endpoint_id: int, now: datetime) -> None:
    """Start the endpoint's run of failures, and turn it off when the run is DISABLE_AFTER
    long (every attempt since then failed: a success ends the run)."""
    Endpoint.objects.filter(pk=endpoint_id, failing_since__isnull=True).update(failing_since=now)
    Endpoint.objects.filter(
        pk=endpoint_id, is_active=True, failing_since__lte=now - DISABLE_AFTER
    ).update(
        is_active=False,
        disabled_reason=(
            f"Turned off on {now:%Y-%m-%d %H:%M} UTC: every delivery failed for "
            f"{DISABLE_AFTER.days} days."
        ),
        updated_at=now,
    )


@every(timedelta(days=1))
@task()
def prune_deliveries() -> int:
    """Deliveries finished (succeeded or failed) more than DELIVERIES_KEPT ago; pending
    ones stay whatever their age."""
    deleted, _ = Delivery.objects.filter(
        status__in=[DeliveryStatus.SUCCEEDED, DeliveryStatus.FAILED],
        updated_at__lt=timezone.now() - DELIVERIES_KEPT,
    ).delete()
    return deleted
