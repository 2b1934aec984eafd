"""An endpoint deleted or turned off (by the organization, or after five days of
failures) has its pending deliveries failed in one statement, not drained a few per
claim: those under way are left to the claim that holds them, and other endpoints'
deliveries are untouched."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from events import services
from events.delivery import claim, fan_out_all, lease
from events.models import Delivery, DeliveryStatus, Endpoint
from events.services import NOT_SENT

pytestmark = pytest.mark.django_db


@pytest.fixture
def backlog(org_a):
    """Two endpoints with six pending deliveries each: two under way (leased), two
    waiting for a retry, two never attempted."""
    gone = services.create_endpoint(organization=org_a, url="https://gone.example.com/")
    kept = services.create_endpoint(organization=org_a, url="https://kept.example.com/")
    for n in range(6):
        services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": n})
    fan_out_all()
    now = timezone.now()
    for endpoint in (gone, kept):
        ids = list(Delivery.objects.filter(endpoint=endpoint).order_by("id").values_list("pk"))
        Delivery.objects.filter(pk__in=[pk for (pk,) in ids[:2]]).update(
            claimed_until=now + lease(), attempts=1
        )
        Delivery.objects.filter(pk__in=[pk for (pk,) in ids[2:4]]).update(
            next_attempt_at=now + timedelta(hours=1), attempts=1
        )
    return gone, kept


def statuses(endpoint) -> list[tuple[str, bool, str]]:
    """(status, under way, error) of the endpoint's deliveries, oldest first."""
    return [
        (d.status, d.claimed_until is not None, d.last_error)
        for d in Delivery.objects.filter(endpoint=endpoint).order_by("id")
    ]


def settled(endpoint) -> None:
    """Those under way still pending, the four others failed, not sent."""
    assert statuses(endpoint) == 2 * [(DeliveryStatus.PENDING, True, "")] + 4 * [
        (DeliveryStatus.FAILED, False, NOT_SENT)
    ]
    assert not Delivery.objects.filter(endpoint=endpoint, next_attempt_at__isnull=False).exists()


def untouched(endpoint) -> None:
    assert [status for status, _, _ in statuses(endpoint)] == 6 * [DeliveryStatus.PENDING]


def delivery_writes(queries) -> list[str]:
    table = Delivery._meta.db_table
    return [q["sql"] for q in queries if q["sql"].startswith("UPDATE") and table in q["sql"]]


def test_deleting_an_endpoint_fails_its_pending_deliveries_in_one_statement(backlog):
    gone, kept = backlog
    with CaptureQueriesContext(connection) as queries:
        services.delete_endpoint(endpoint=gone)
    assert len(delivery_writes(queries.captured_queries)) == 1
    settled(gone)
    untouched(kept)


def test_turning_an_endpoint_off_fails_its_pending_deliveries(api, backlog):
    gone, kept = backlog
    answer = api.patch(f"/api/webhooks/{gone.uuid}", {"is_active": False}, format="json")
    assert answer.status_code == 200
    settled(gone)
    untouched(kept)


def test_an_edit_that_keeps_it_on_settles_nothing(api, backlog):
    gone, kept = backlog
    api.patch(f"/api/webhooks/{gone.uuid}", {"url": "https://new.example.com/"}, format="json")
    untouched(gone)


def test_an_endpoint_turned_off_after_five_days_of_failures_is_settled(backlog):
    gone, kept = backlog
    now = timezone.now()
    Endpoint.objects.filter(pk=gone.pk).update(failing_since=now - timedelta(days=6))
    assert services.disable_failing_endpoint(endpoint_id=gone.pk, now=now)
    settled(gone)
    untouched(kept)


def test_a_claim_then_takes_none_of_the_settled(backlog, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 10
    gone, kept = backlog
    services.delete_endpoint(endpoint=gone)
    # Every pending delivery due now: the leases ended, the retries' time came.
    Delivery.objects.update(claimed_until=None, next_attempt_at=None)

    taken = claim(100)

    # Of the deleted endpoint's, only the two that were under way when it was deleted
    # (their claim fails them, not sent); all of the other endpoint's.
    assert sorted(item.endpoint_id for item in taken) == 2 * [gone.pk] + 6 * [kept.pk]
