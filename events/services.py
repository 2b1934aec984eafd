"""Writes of the events app: emitting an event, and managing the endpoints.

Events are emitted by the services of the apps that sit above this one (contacts,
canned_replies, sending), each in its own transaction, with the payload (`data`) built
from its own representations: this app knows no resource's fields, so it cannot import
them. An emission owes the event to each of the organization's endpoints that wants it:
one Emission row, written in the caller's transaction, so the event is sent if and only
if the change commits. A worker turns it into one Delivery per endpoint soon after
(events/delivery.py): the web's hot paths write one light row per event, not a row per
endpoint with its indexes and foreign keys.

Inside `event_batch()` (a transaction: the inbound webhook's, a service's that emits)
the organization's endpoints are looked up once, and the rows of every emission are
kept aside and written by one insert as the batch ends, before its transaction commits.
The batch also executes, after that insert, the statements given to `at_batch_end()`:
those that lock a row every request of an organization wants (the contacts' counts).
Done last, the lock is held for the commit alone, not for the rest of the request. The
insert and those statements go to PostgreSQL in one round trip.

A savepoint inside the batch (`transaction.atomic()`, or a nested `event_batch()`) that
is rolled back (a message found to be a duplicate) drops what was emitted or deferred
inside it: the batch follows the savepoints its connection opens, releases and rolls
back, through Django's execute wrappers. Outside a batch, an emission costs one lookup
and, when someone listens, one insert.
"""

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import Organization
from events import queries
from events.formats import swiftchats_body
from events.models import (
    Delivery,
    DeliveryStatus,
    Emission,
    Endpoint,
    Event,
    Format,
    new_secret,
)
from events.representations import endpoint_listed
from messaging_project.core.database import (
    Statement,
    column_types,
    execute_together,
    insert_statements,
)

MAX_ENDPOINTS = 10
# In English, the API's language; marked so that the admin shows it translated.
TOO_MANY = gettext_noop("An organization can have at most %(limit)d webhook endpoints.")
TOO_MANY_ENDPOINTS = TOO_MANY % {"limit": MAX_ENDPOINTS}
# After a rotation the old secret keeps signing, next to the new one, this long.
ROTATION_OVERLAP = timedelta(hours=24)
# An endpoint whose every attempt failed for this long is turned off (docs/events.md).
DISABLE_AFTER = timedelta(days=5)
TURNED_OFF_BY_ORGANIZATION = "Turned off by the organization."
# The error of a delivery not sent because its endpoint was deleted or turned off.
NOT_SENT = "The endpoint was deleted or turned off."

Data = Mapping[str, Any]
Row = tuple[str, str, str]  # endpoints (comma-separated ids), event, body


SAVEPOINT, RELEASE, ROLLBACK_TO = "SAVEPOINT ", "RELEASE SAVEPOINT ", "ROLLBACK TO SAVEPOINT "


class Batch:
    """What a batch keeps for its end: its emissions' rows and the deferred statements,
    and each organization's endpoints once looked up."""

    def __init__(self) -> None:
        self.listening: dict[int, list[Listener]] = {}  # organization -> its endpoints
        self.rows: list[Row] = []
        self.statements: list[Statement] = []
        # Each savepoint opened inside the batch: how much was kept when it was opened.
        self.savepoints: dict[str, tuple[int, int]] = {}

    def follow_savepoints(self, execute, sql, params, many, context):
        """An execute wrapper (connection.execute_wrapper) for the batch's duration:
        what a savepoint rolled back had emitted or deferred is dropped with it."""
        if isinstance(sql, str) and sql.startswith((SAVEPOINT, RELEASE, ROLLBACK_TO)):
            if sql.startswith(SAVEPOINT):
                self.savepoints[sql.removeprefix(SAVEPOINT)] = (
                    len(self.rows),
                    len(self.statements),
                )
            elif sql.startswith(ROLLBACK_TO) and (
                kept := self.savepoints.get(sql.removeprefix(ROLLBACK_TO))
            ):
                del self.rows[kept[0] :]
                del self.statements[kept[1] :]
            else:
                self.savepoints.pop(sql.removeprefix(RELEASE), None)
        return execute(sql, params, many, context)


batches = threading.local()  # per thread, as Django's connections are


def current_batch() -> Batch | None:
    return getattr(batches, "current", None)


@contextmanager
def event_batch(endpoints: Mapping[int, list[tuple]] | None = None) -> Iterator[None]:
    """A transaction (a savepoint when nested) whose emissions look each organization's
    endpoints up once and are written by one insert at its end, before the commit.
    `endpoints`: organizations' active endpoints as listening_rows() gives them, read by
    the caller with what it read anyway (the webhook's organization), not looked up."""
    if current_batch() is not None:  # the outer batch writes them (and follows this one)
        with transaction.atomic():
            yield
        return
    batch = batches.current = Batch()
    for organization_id, rows in (endpoints or {}).items():
        batch.listening[organization_id] = listeners(rows)
    try:
        with transaction.atomic(), connection.execute_wrapper(batch.follow_savepoints):
            yield
            write_batch(batch)
    finally:
        batches.current = None


def write_batch(batch: Batch) -> None:
    """Insert the batch's emissions, then execute its deferred statements in the order
    they were given, and the commit of an outermost batch: one round trip."""
    if connection.needs_rollback:  # the whole transaction is being rolled back
        return
    # The batch's end is its transaction's: an outermost one commits in this round trip.
    execute_together(emission_inserts(batch.rows) + batch.statements, last=True)
    batch.rows.clear()
    batch.statements.clear()


# The emissions' insert written out: the ORM's bulk_create compiled it for longer than
# PostgreSQL ran it (6% of a status webhook's CPU, in-process on PostgreSQL), and it
# goes in the round trip of the batch's deferred statements.
EMISSION_INSERT = f"INSERT INTO {Emission._meta.db_table} (endpoints, event, body, created_at) "  # noqa: S608


def emission_inserts(rows: list[Row]) -> list[Statement]:
    """The statements that insert these emissions, stamped now; none without rows."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    values = [(endpoints, event, body, now) for endpoints, event, body in rows]
    types = column_types(Emission, ("endpoints", "event", "body", "created_at"))
    return insert_statements(EMISSION_INSERT, types, values)


def in_batch() -> Batch | None:
    """The current batch, if its transaction is the one open (a batch's work is kept for
    its end only inside it)."""
    batch = current_batch()
    return batch if batch is not None and connection.in_atomic_block else None


def at_batch_end(sql: str, params: Sequence[Any]) -> None:
    """Execute the statement as the current batch ends, after its emissions and in the
    same round trip, just before the commit; now outside a batch. Dropped with a nested
    batch rolled back. For writes that lock rows the organization's other requests wait
    for: their lock is then held for the commit only."""
    batch = in_batch()
    if batch is None:
        execute_together([(sql, params)])
    else:
        batch.statements.append((sql, params))


def insert_emissions(rows: list[Row]) -> None:
    """The emissions (endpoints, event, body), stamped now, in one insert; none without
    rows (every batch asks, most have none)."""
    execute_together(emission_inserts(rows))


class Listener(NamedTuple):
    """An active endpoint as an emission needs it: a model instance cost ten times more
    to build (its secrets' defaults are made for each)."""

    pk: int
    events: list[str]
    format: str = Format.STANDARD

    def subscribes_to(self, event: str) -> bool:
        return not self.events or event in self.events


def listeners(rows: Iterable[tuple]) -> list[Listener]:
    """Listeners from rows of (id, events as stored, format)."""
    events_field = Endpoint._meta.get_field("events")
    return [
        # No expression: JSONField reads one only to tell a key transform (stubs want one).
        Listener(pk, events_field.from_db_value(events, None, connection), format)  # type: ignore[arg-type]
        for pk, events, format in rows
    ]


def listening_endpoints(organization_id: int) -> list[Listener]:
    """The organization's active endpoints (only `id`, `events` and `format`): one query
    on a partial index, once per batch."""
    batch = current_batch()
    if batch is not None and organization_id in batch.listening:
        return batch.listening[organization_id]
    endpoints = listeners(queries.listening_rows(organization_id))
    if batch is not None:
        batch.listening[organization_id] = endpoints
    return endpoints


def subscribed_endpoints(organization_id: int, event: str) -> list[Listener]:
    """The organization's active endpoints that want `event`. The subscription list is
    filtered here, not in SQL (SQLite has no JSON containment), among at most
    MAX_ENDPOINTS rows."""
    return [e for e in listening_endpoints(organization_id) if e.subscribes_to(event)]


def emit_event(
    *,
    organization_id: int,
    event: str,
    data: Data | Callable[[], Data],
    swiftchats: Data | Callable[[], Data] | None = None,
) -> int:
    """Owe `event` with `data` to each of the organization's endpoints that wants it;
    how many deliveries that owes. `data` may be a function, called only when some
    endpoint wants the event (building it may cost queries). `swiftchats`: the `data`
    of the original product's body (events/formats.py), where it is not derived from
    `data`; called only when a `swiftchats` endpoint wants the event."""
    return emit_events(
        organization_id=organization_id,
        event=event,
        data=lambda: [data() if callable(data) else data],
        swiftchats=(
            None
            if swiftchats is None
            else lambda: [swiftchats() if callable(swiftchats) else swiftchats]
        ),
    )


def emit_events(
    *,
    organization_id: int,
    event: str,
    data: Callable[[], Iterable[Data]],
    endpoints: list[Listener] | None = None,
    swiftchats: Callable[[], Iterable[Data]] | None = None,
) -> int:
    """`emit_event` for many objects at once (the statuses of a webhook from the channel):
    still one query when nobody listens, one insert of a row per object when someone
    does (none of its own in a batch), however many endpoints listen. `endpoints`: those
    subscribed_endpoints() gave the caller already.

    Each format that some endpoint wants is a row of its own, with that format's body:
    the original product's body (and what it needs, the WhatsApp change of a message) is
    built and stored only when a `swiftchats` endpoint listens."""
    if endpoints is None:
        endpoints = subscribed_endpoints(organization_id, event)
    if not endpoints:
        return 0
    standard = [e for e in endpoints if e.format != Format.SWIFTCHATS]
    originals = [e for e in endpoints if e.format == Format.SWIFTCHATS]
    items = list(data()) if standard or swiftchats is None else []
    rows: list[Row] = []
    if standard:
        timestamp = timezone.now().isoformat().replace("+00:00", "Z")
        listeners = ",".join(str(endpoint.pk) for endpoint in standard)
        rows += [
            (
                listeners,
                str(event),
                json.dumps(
                    {"type": event, "timestamp": timestamp, "data": item}, separators=(",", ":")
                ),
            )
            for item in items
        ]
    if originals:
        listeners = ",".join(str(endpoint.pk) for endpoint in originals)
        given = list(swiftchats()) if swiftchats is not None else None
        rows += [
            (listeners, str(event), swiftchats_body(event, item, given=given is not None))
            for item in (given if given is not None else items)
        ]
    batch = in_batch()
    if batch is None:
        insert_emissions(rows)
    else:
        batch.rows.extend(rows)
    return sum(len(r[0].split(",")) for r in rows)


def refuse_too_many(organization: Organization) -> None:
    """At most MAX_ENDPOINTS live endpoints. The organization's row is locked first, so
    two concurrent creates are counted one after the other (SQLite: the write lock)."""
    Organization.objects.select_for_update().filter(pk=organization.pk).exists()
    if Endpoint.objects.live().filter(organization=organization).count() >= MAX_ENDPOINTS:
        raise ValidationError({"url": [ValidationError(TOO_MANY, params={"limit": MAX_ENDPOINTS})]})


def create_endpoint(
    *,
    organization: Organization,
    url: str,
    events: list[str] | None = None,
    format: str = Format.STANDARD,
    created_by: int = 0,
) -> Endpoint:
    with transaction.atomic():
        refuse_too_many(organization)
        return Endpoint.objects.create(
            organization=organization,
            url=url,
            events=sorted(set(events or [])),
            format=format,
            created_by=created_by,
        )


def update_endpoint(*, endpoint: Endpoint, changes: dict[str, Any]) -> Endpoint:
    """Change only the fields given, while the endpoint is live (Http404 otherwise).
    Turning it on again forgets why it was turned off, its run of failures and its
    back-off."""
    values = dict(changes)
    if "events" in values:
        values["events"] = sorted(set(values["events"] or []))
    if values.get("is_active") is True:
        values.update(
            disabled_reason="",
            disabled_at=None,
            failing_since=None,
            failures_in_a_row=0,
            open_until=None,
            times_opened=0,
        )
    elif values.get("is_active") is False:
        values.setdefault("disabled_reason", TURNED_OFF_BY_ORGANIZATION)
        values.setdefault("disabled_at", timezone.now())
    with transaction.atomic():
        Endpoint.objects.update_live(endpoint, **values)
        if values.get("is_active") is False:
            settle_pending(endpoint.pk, timezone.now())
    return endpoint


def settle_pending(endpoint_id: int, now: datetime) -> int:
    """Fail, in one statement, the pending deliveries of an endpoint deleted or turned
    off (NOT_SENT), in the caller's transaction; how many. Not those under way: their
    claim records their outcome, and what is pending after it (a retry, a delivery
    fanned out from an emission written before) is failed by the claim that takes it.
    Without this a backlog of 500,000 drained a few deliveries a claim (the caps), for
    hours, each one a write and a place in the turns."""
    return Delivery.objects.filter(
        endpoint_id=endpoint_id, status=DeliveryStatus.PENDING, claimed_until__isnull=True
    ).update(
        status=DeliveryStatus.FAILED, next_attempt_at=None, last_error=NOT_SENT, updated_at=now
    )


def disable_failing_endpoint(*, endpoint_id: int, now: datetime) -> bool:
    """Turn the endpoint off if every attempt for DISABLE_AFTER failed: its run of
    failures (from its first failed attempt after its last success) began that long
    ago, and no delivery of it succeeded since. Then its pending deliveries fail
    (settle_pending) and a `webhook.disabled` event goes to the organization's other
    active endpoints, in the caller's transaction. One UPDATE decides, so of workers
    recording failures at once only one turns it off and emits; whether this call did."""
    since = now - DISABLE_AFTER
    succeeded = Delivery.objects.filter(
        endpoint=OuterRef("pk"), status=DeliveryStatus.SUCCEEDED, updated_at__gte=since
    )
    turned_off = (
        Endpoint.objects.live()
        .filter(pk=endpoint_id, is_active=True, failing_since__lte=since)
        .exclude(Exists(succeeded))
        .update(
            is_active=False,
            disabled_reason=(
                f"Turned off on {now:%Y-%m-%d %H:%M} UTC: every delivery failed for "
                f"{DISABLE_AFTER.days} days."
            ),
            disabled_at=now,
            updated_at=now,
        )
    )
    if not turned_off:
        return False
    settle_pending(endpoint_id, now)
    endpoint = Endpoint.objects.get(pk=endpoint_id)
    # Sent to the active endpoints only: this one is off by now.
    emit_event(
        organization_id=endpoint.organization_id,
        event=Event.WEBHOOK_DISABLED,
        data=lambda: endpoint_listed(endpoint),
    )
    return True


def delete_endpoint(*, endpoint: Endpoint) -> None:
    """Soft-delete; its pending deliveries fail, not sent (settle_pending)."""
    now = timezone.now()
    with transaction.atomic():
        Endpoint.objects.update_live(endpoint, deleted_at=now, updated_at=now)
        settle_pending(endpoint.pk, now)


def rotate_secret(*, endpoint: Endpoint) -> Endpoint:
    """A new secret; the current one keeps signing, next to it, for ROTATION_OVERLAP.
    Rotating again within that time drops the oldest: two secrets at most."""
    now = timezone.now()
    with transaction.atomic():
        current = Endpoint.objects.live().select_for_update().filter(pk=endpoint.pk).first()
        if current is None:
            raise Http404("No live endpoint.")
        current.previous_secret = current.secret
        current.previous_secret_expires_at = now + ROTATION_OVERLAP
        current.secret = new_secret()
        current.save(
            update_fields=["secret", "previous_secret", "previous_secret_expires_at", "updated_at"]
        )
    return current


def send_again(*, delivery: Delivery) -> bool:
    """One more attempt of a delivery, now, with the same `webhook-id` (the admin's
    "send again"): due now, for the workers' next look. Not while an attempt is under
    way; whether it was queued."""
    now = timezone.now()
    with transaction.atomic():
        queued = Delivery.objects.filter(
            pk=delivery.pk, attempts=delivery.attempts, claimed_until__isnull=True
        ).update(status=DeliveryStatus.PENDING, next_attempt_at=now, updated_at=now)
    return bool(queued)
