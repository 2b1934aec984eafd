"""An endpoint whose every attempt failed for five days is turned off, says why and
when, and the organization's other endpoints get a `webhook.disabled` event; turned on
again by the API or the admin, it starts afresh. Real receivers on loopback."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from devtools.webhook_receiver import WebhookReceiver
from events import services
from events.delivery import DeliveryQueue, fan_out_all
from events.models import Delivery, DeliveryStatus, Endpoint
from tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def failing():
    with WebhookReceiver(status=500) as server:
        yield server


def long_failing(endpoint: Endpoint, days: float = 5.01) -> None:
    Endpoint.objects.filter(pk=endpoint.pk).update(
        failing_since=timezone.now() - timedelta(days=days)
    )
    endpoint.refresh_from_db()


def one_failed_attempt(organization, endpoint) -> None:
    """An event whose delivery to `endpoint` is attempted and fails."""
    services.emit_event(organization_id=organization.pk, event="group.created", data={"n": 1})
    DeliveryQueue().run_due()
    assert Delivery.objects.filter(endpoint=endpoint, attempts__gte=1).exists()


def test_five_days_of_failures_turn_it_off_and_tell_the_other_endpoints(
    api, org_a, failing, receiver
):
    dead = services.create_endpoint(organization=org_a, url=failing.url)
    other = services.create_endpoint(organization=org_a, url=receiver.url)
    one_failed_attempt(org_a, dead)
    dead.refresh_from_db()
    assert dead.is_active and dead.failing_since is not None
    long_failing(dead)

    one_failed_attempt(org_a, dead)
    DeliveryQueue().run_due()  # the webhook.disabled event

    dead.refresh_from_db()
    assert not dead.is_active and dead.disabled_at is not None
    detail = api.get(f"/api/webhooks/{dead.uuid}").json()["data"]
    assert detail["is_active"] is False
    assert "every delivery failed for 5 days" in detail["disabled_reason"]
    assert detail["disabled_at"].endswith("Z")
    # Only the other endpoint is told, with the endpoint as the list shows it (no secret).
    told = [json.loads(r.body) for r in receiver.requests if b"webhook.disabled" in r.body]
    assert [body["data"]["uuid"] for body in told] == [str(dead.uuid)]
    assert "secret" not in told[0]["data"] and told[0]["data"]["is_active"] is False
    assert not any(b"webhook.disabled" in r.body for r in failing.requests)
    assert not Delivery.objects.filter(endpoint=dead, event="webhook.disabled").exists()
    assert other.pk != dead.pk


def test_four_days_of_failures_leave_it_on(org_a, failing):
    endpoint = services.create_endpoint(organization=org_a, url=failing.url)
    one_failed_attempt(org_a, endpoint)
    long_failing(endpoint, days=4.9)
    one_failed_attempt(org_a, endpoint)
    endpoint.refresh_from_db()
    assert endpoint.is_active and endpoint.disabled_at is None


def test_a_success_within_the_five_days_keeps_it_on(org_a, failing):
    """The run of failures as a claim read it may be stale: a delivery that succeeded
    within the five days is found all the same."""
    endpoint = services.create_endpoint(organization=org_a, url=failing.url)
    one_failed_attempt(org_a, endpoint)
    Delivery.objects.filter(endpoint=endpoint).update(
        status=DeliveryStatus.SUCCEEDED, updated_at=timezone.now() - timedelta(days=1)
    )
    long_failing(endpoint)
    one_failed_attempt(org_a, endpoint)
    endpoint.refresh_from_db()
    assert endpoint.is_active


def test_turned_on_again_by_the_api_it_starts_afresh(api, org_a, failing):
    endpoint = services.create_endpoint(organization=org_a, url=failing.url)
    one_failed_attempt(org_a, endpoint)
    long_failing(endpoint)
    one_failed_attempt(org_a, endpoint)

    response = api.patch(f"/api/webhooks/{endpoint.uuid}", {"is_active": True}, format="json")

    assert response.status_code == 200
    detail = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]
    assert detail["is_active"] is True
    assert (detail["disabled_reason"], detail["disabled_at"]) == (None, None)
    endpoint.refresh_from_db()
    assert endpoint.failing_since is None


def test_turned_off_by_the_organization_it_says_when(api, org_a, receiver):
    endpoint = services.create_endpoint(organization=org_a, url=receiver.url)
    api.patch(f"/api/webhooks/{endpoint.uuid}", {"is_active": False}, format="json")
    detail = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]
    assert detail["disabled_reason"] == "Turned off by the organization."
    assert detail["disabled_at"] is not None


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks of PostgreSQL")
def test_workers_failing_at_once_turn_it_off_once_and_tell_once(receiver):
    from django.db import connections

    organization = OrganizationFactory()
    with WebhookReceiver(status=500) as dead_receiver:
        dead = services.create_endpoint(organization=organization, url=dead_receiver.url)
        services.create_endpoint(organization=organization, url=receiver.url)
        Endpoint.objects.filter(pk=dead.pk).update(failing_since=timezone.now() - timedelta(days=6))
        for n in range(8):
            services.emit_event(
                organization_id=organization.pk, event="group.created", data={"n": n}
            )
        fan_out_all()
        barrier = threading.Barrier(4)

        def worker():
            try:
                barrier.wait()
                DeliveryQueue(slots=2).run_due()
            finally:
                connections.close_all()

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    fan_out_all()
    assert Delivery.objects.filter(event="webhook.disabled").count() == 1
    assert not Endpoint.objects.get(pk=dead.pk).is_active
