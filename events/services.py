"""Writes of the events app: emitting an event, and managing the endpoints.

Events are emitted by the services of the apps that sit above this one (contacts,
canned_replies, sending), each in its own transaction, with the payload (`data`) it
builds in its own shape: this app knows no resource's fields, so it cannot import them.
`emit_event()` costs one indexed query when the organization has no endpoint that wants
the event; otherwise one bulk insert of the deliveries and one task for their first
attempts, in the caller's transaction, so the event is sent if and only if the change commits.
"""

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.http import Http404
from django.utils import timezone

from accounts.models import Organization
from events.models import Delivery, DeliveryStatus, Endpoint, new_secret
from events.tasks import deliver_event, deliver_events

MAX_ENDPOINTS = 10
TOO_MANY_ENDPOINTS = f"An organization can have at most {MAX_ENDPOINTS} webhook endpoints."
# After a rotation the old secret keeps signing, next to the new one, this long.
ROTATION_OVERLAP = timedelta(hours=24)

Data = Mapping[str, Any]

# The endpoints that may want an event (subscribed_endpoints).
LISTENING_SQL = (
    "SELECT id, events FROM {table} "
    "WHERE organization_id = %s AND is_active AND deleted_at IS NULL ORDER BY id"
)


def subscribed_endpoints(organization_id: int, event: str) -> list[Endpoint]:
    """The organization's active endpoints that want `event` (only `id` and `events`
    loaded): one query on a partial index. The subscription list is filtered here, not
    in SQL (SQLite has no JSON containment), among at most MAX_ENDPOINTS rows.

    Every emission on every path asks this, usually to learn that nobody listens: the
    statement is written out rather than built by the ORM, whose compiling cost four
    times the query's own round trip here (docs/performance.md)."""
    events_field = Endpoint._meta.get_field("events")
    with connection.cursor() as cursor:
        cursor.execute(
            LISTENING_SQL.format(table=connection.ops.quote_name(Endpoint._meta.db_table)),
            [organization_id],
        )
        rows = cursor.fetchall()
    endpoints = [
        Endpoint(id=pk, events=events_field.from_db_value(events, None, connection))
        for pk, events in rows
    ]
    return [endpoint for endpoint in endpoints if endpoint.subscribes_to(event)]


def emit_event(*, organization_id: int, event: str, data: Data | Callable[[], Data]) -> int:
    """Owe `event` with `data` to each of the organization's endpoints that wants it;
    how many deliveries that made. `data` may be a function, called only when some
    endpoint wants the event (building it may cost queries)."""
    return emit_events(
        organization_id=organization_id,
        event=event,
        data=lambda: [data() if callable(data) else data],
    )


def emit_events(
    *,
    organization_id: int,
    event: str,
    data: Callable[[], Iterable[Data]],
    endpoints: list[Endpoint] | None = None,
) -> int:
    """`emit_event` for many objects at once (the statuses of a webhook from the channel):
    still one query when nobody listens, one bulk insert when someone does. `endpoints`:
    those subscribed_endpoints() gave the caller already (not looked up again)."""
    if endpoints is None:
        endpoints = subscribed_endpoints(organization_id, event)
    if not endpoints:
        return 0
    timestamp = timezone.now().isoformat().replace("+00:00", "Z")
    bodies = [
        json.dumps({"type": event, "timestamp": timestamp, "data": item}, separators=(",", ":"))
        for item in data()
    ]
    # No savepoint of its own: in the caller's transaction, the deliveries and their tasks
    # stand or fall with the change (and a savepoint would cost two round trips).
    with transaction.atomic(savepoint=False):
        deliveries = Delivery.objects.bulk_create(
            [
                Delivery(
                    organization_id=organization_id,
                    endpoint_id=endpoint.pk,
                    event=event,
                    body=body,
                )
                for body in bodies
                for endpoint in endpoints
            ]
        )
        # Their first attempts: one task.
        deliver_events.enqueue([delivery.pk for delivery in deliveries])
    return len(deliveries)


def refuse_too_many(organization: Organization) -> None:
    """At most MAX_ENDPOINTS live endpoints. The organization's row is locked first, so
    two concurrent creates are counted one after the other (SQLite: the write lock)."""
    Organization.objects.select_for_update().filter(pk=organization.pk).exists()
    if Endpoint.objects.live().filter(organization=organization).count() >= MAX_ENDPOINTS:
        raise ValidationError({"url": [TOO_MANY_ENDPOINTS]})


def create_endpoint(
    *, organization: Organization, url: str, events: list[str] | None = None, created_by: int = 0
) -> Endpoint:
    with transaction.atomic():
        refuse_too_many(organization)
        return Endpoint.objects.create(
            organization=organization,
            url=url,
            events=sorted(set(events or [])),
            created_by=created_by,
        )


def update_endpoint(*, endpoint: Endpoint, changes: dict[str, Any]) -> Endpoint:
    """Change only the fields given, while the endpoint is live (Http404 otherwise).
    Turning it on again forgets why it was turned off and its run of failures."""
    values = dict(changes)
    if "events" in values:
        values["events"] = sorted(set(values["events"] or []))
    if values.get("is_active") is True:
        values.update(disabled_reason="", failing_since=None)
    elif values.get("is_active") is False:
        values.setdefault("disabled_reason", "Turned off by the organization.")
    Endpoint.objects.update_live(endpoint, **values)
    return endpoint


def delete_endpoint(*, endpoint: Endpoint) -> None:
    """Soft-delete; its pending deliveries are not sent (the task finds it deleted)."""
    now = timezone.now()
    Endpoint.objects.update_live(endpoint, deleted_at=now, updated_at=now)


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
    "send again"). Not while an attempt is under way; whether it was queued."""
    now = timezone.now()
    with transaction.atomic():
        queued = Delivery.objects.filter(
            pk=delivery.pk, attempts=delivery.attempts, claimed_until__isnull=True
        ).update(status=DeliveryStatus.PENDING, next_attempt_at=now, updated_at=now)
        if queued:
            deliver_event.enqueue(delivery.pk, delivery.attempts + 1)
    return bool(queued)
