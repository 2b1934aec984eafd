"""WEBHOOK_TIMEOUT bounds the whole attempt: a real receiver on loopback that answers one
byte a second is cut off at the deadline, and the delivery follows its retry schedule.
A real worker process given SIGTERM with such a POST under way exits within its
graceful timeout, the attempt left to be retried."""

import time

import pytest
from django.db import connection

from devtools.webhook_receiver import WebhookReceiver
from events import services
from events.delivery import DeliveryQueue
from events.models import Delivery, DeliveryStatus
from tests.events.conftest import deliveries
from tests.factories import OrganizationFactory
from tests.tasks.processes import environment, start_worker, stop


@pytest.fixture
def dripping():
    with WebhookReceiver(drip=1.0) as server:
        yield server


def test_a_dripping_receiver_is_cut_off_at_the_timeout_and_retried_until_failed(
    org_a, dripping, settings
):
    settings.WEBHOOK_TIMEOUT = 1.5
    settings.WEBHOOK_RETRY_SCHEDULE = [1, 2]
    services.create_endpoint(organization=org_a, url=dripping.url)
    services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": 1})
    queue = DeliveryQueue()

    started = time.monotonic()
    assert queue.run_due() == 1
    took = time.monotonic() - started
    assert 1.4 < took < 3.0, took  # not the ~70 s the whole answer would take
    [delivery] = deliveries()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.attempts == 1 and delivery.next_attempt_at is not None
    assert "No complete answer within 1.5 s" in delivery.last_error

    for attempt in (2, 3):
        Delivery.objects.update(next_attempt_at=delivery.created_at)  # due now
        assert queue.run_due() == 1
        delivery.refresh_from_db()
        assert delivery.attempts == attempt
    assert delivery.status == DeliveryStatus.FAILED
    assert len(dripping.requests) == 3


def test_a_receiver_that_answers_in_time_still_succeeds(org_a, receiver, settings):
    settings.WEBHOOK_TIMEOUT = 1.5
    receiver.delay = 0.5
    services.create_endpoint(organization=org_a, url=receiver.url)
    services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": 1})
    DeliveryQueue().run_due()
    [delivery] = deliveries()
    assert (delivery.status, delivery.response_status) == (DeliveryStatus.SUCCEEDED, 200)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a real worker on PostgreSQL")
def test_a_worker_given_sigterm_mid_post_exits_within_its_graceful_timeout(dripping, tmp_path):
    organization = OrganizationFactory()
    services.create_endpoint(organization=organization, url=dripping.url)
    services.emit_event(organization_id=organization.pk, event="group.created", data={"n": 1})
    env = environment(
        tmp_path,
        WEBHOOK_ALLOW_PRIVATE_URLS="true",
        WEBHOOK_TIMEOUT="120",  # the attempt alone would hold the worker for two minutes
        TASK_WORKER_GRACEFUL_TIMEOUT="2",
    )
    log = tmp_path / "worker.log"
    worker = start_worker(env, log)
    try:
        assert dripping.wait_for(1, timeout=30), log.read_text()[-3000:]
        time.sleep(0.5)  # the answer has begun to drip
        started = time.monotonic()
        code = stop(worker, seconds=15)
        took = time.monotonic() - started
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
    assert code == 0, log.read_text()[-3000:]
    assert took < 2 + 3, took  # the graceful timeout, and a moment to record and exit
    # The attempt is recorded as failed and left to its retry: nothing lost.
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.PENDING, 1)
    assert delivery.claimed_until is None and delivery.next_attempt_at is not None
    assert "the worker is stopping" in delivery.last_error
    assert len(dripping.requests) == 1
