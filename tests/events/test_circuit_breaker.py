"""An endpoint that keeps failing is backed off as a whole (docs/events.md): after
WEBHOOK_BREAKER_FAILURES failed attempts in a row none of its deliveries is attempted
until its back-off ends; then one attempt at a time probes it, a failure backs it off
for longer, a success lets its backlog flow again. Real receivers on loopback."""

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from devtools.webhook_receiver import WebhookReceiver
from events import services
from events.delivery import DeliveryQueue, fan_out_all
from events.models import Circuit, Delivery, DeliveryStatus, Endpoint
from tests.background import make_due
from tests.databases import on_postgresql
from tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def breaker_settings(settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 4
    settings.WEBHOOK_BREAKER_FAILURES = 3
    settings.WEBHOOK_BREAKER_BACKOFF = [60, 600]
    settings.WEBHOOK_RETRY_SCHEDULE = [1, 1, 1, 1, 1, 1]


def emit(organization, count: int) -> None:
    for n in range(count):
        services.emit_event(organization_id=organization.pk, event="group.created", data={"n": n})
    fan_out_all()


def drain() -> int:
    """Attempt the due deliveries until none is left; how many attempts."""
    attempted = 0
    while done := DeliveryQueue().run_due():
        attempted += done
    return attempted


def back_off_over(endpoint: Endpoint) -> None:
    Endpoint.objects.filter(pk=endpoint.pk).update(open_until=timezone.now() - timedelta(seconds=1))
    make_due()


def opened(organization, receiver) -> Endpoint:
    """An endpoint with ten events owed, whose first four attempts failed: backed off."""
    endpoint = services.create_endpoint(organization=organization, url=receiver.url)
    emit(organization, 10)
    receiver.fail_next(500, 500, 500, 500)
    assert DeliveryQueue().run_due() == 4  # the cap: four at once, all failing
    endpoint.refresh_from_db()
    return endpoint


def test_failing_attempts_in_a_row_back_the_endpoint_off_as_a_whole(org_a, receiver):
    endpoint = opened(org_a, receiver)
    now = timezone.now()
    assert endpoint.circuit(now) == Circuit.OPEN
    assert endpoint.failures_in_a_row == 4 and endpoint.times_opened == 1
    assert now + timedelta(seconds=55) < endpoint.open_until <= now + timedelta(seconds=60)

    make_due()  # every delivery's own retry has come
    assert DeliveryQueue().run_due() == 0
    assert len(receiver.requests) == 4
    assert Delivery.objects.filter(status=DeliveryStatus.PENDING).count() == 10


def test_fewer_failures_than_the_threshold_leave_it_closed(org_a, receiver):
    endpoint = services.create_endpoint(organization=org_a, url=receiver.url)
    emit(org_a, 2)
    receiver.fail_next(500, 500)
    DeliveryQueue().run_due()
    endpoint.refresh_from_db()
    assert endpoint.failures_in_a_row == 2 and endpoint.open_until is None
    make_due()
    assert DeliveryQueue().run_due() == 2  # retried, and succeeded
    endpoint.refresh_from_db()
    assert endpoint.failures_in_a_row == 0


def test_once_the_back_off_is_over_one_probe_goes_and_its_failure_backs_off_longer(org_a, receiver):
    endpoint = opened(org_a, receiver)
    back_off_over(endpoint)
    receiver.fail_next(500)

    assert DeliveryQueue().run_due() == 1  # ten due, one probe
    assert len(receiver.requests) == 5
    endpoint.refresh_from_db()
    now = timezone.now()
    assert endpoint.circuit(now) == Circuit.OPEN and endpoint.times_opened == 2
    assert now + timedelta(seconds=590) < endpoint.open_until <= now + timedelta(seconds=600)
    make_due()
    assert DeliveryQueue().run_due() == 0


def test_a_probe_that_succeeds_closes_it_and_the_backlog_flows_again(org_a, receiver):
    endpoint = opened(org_a, receiver)
    back_off_over(endpoint)

    assert DeliveryQueue().run_due() == 1  # the probe, answered 200
    endpoint.refresh_from_db()
    assert endpoint.circuit(timezone.now()) == Circuit.CLOSED
    assert (endpoint.failures_in_a_row, endpoint.times_opened) == (0, 0)
    make_due()
    assert drain() == 9  # the rest, four at a time under way
    assert not Delivery.objects.filter(status=DeliveryStatus.PENDING).exists()
    assert {r.headers["webhook-id"] for r in receiver.requests} == set(
        Delivery.objects.values_list("msg_id", flat=True)
    )


def test_the_api_shows_the_back_off(api, org_a, receiver):
    endpoint = opened(org_a, receiver)
    data = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]
    assert data["circuit"] == "open"
    assert data["backed_off_until"] == endpoint.open_until.isoformat().replace("+00:00", "Z")
    assert data["failures_in_a_row"] == 4

    api.patch(f"/api/webhooks/{endpoint.uuid}", {"is_active": True}, format="json")
    data = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]
    assert (data["circuit"], data["backed_off_until"], data["failures_in_a_row"]) == (
        "closed",
        None,
        0,
    )


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_workers_at_once_send_one_probe_at_a_time():
    """Four workers look at once when the back-off is over: one probe goes, answered
    slowly (so it is under way while the others claim), and fails; nothing else is
    attempted."""
    organization = OrganizationFactory()
    with WebhookReceiver(status=500, delay=0.5) as receiver:
        endpoint = services.create_endpoint(organization=organization, url=receiver.url)
        emit(organization, 8)
        Endpoint.objects.filter(pk=endpoint.pk).update(
            failures_in_a_row=5, times_opened=1, open_until=timezone.now() - timedelta(seconds=1)
        )
        barrier = threading.Barrier(4)
        claimed = []

        def worker():
            try:
                barrier.wait()
                claimed.append(DeliveryQueue(slots=4).run_due())
            finally:
                connections.close_all()

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(claimed) == [0, 0, 0, 1]
        assert len(receiver.requests) == 1
    endpoint.refresh_from_db()
    assert endpoint.circuit(timezone.now()) == Circuit.OPEN and endpoint.times_opened == 2
