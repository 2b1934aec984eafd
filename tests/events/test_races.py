"""Where two workers or two requests meet: on PostgreSQL, with real concurrent
transactions (skipped on SQLite, which serialises writers)."""

import pytest

from events import services
from events.delivery import DeliveryQueue
from events.models import Delivery, DeliveryStatus, Endpoint
from tests.contacts.test_contact_counter import on_postgresql, run_concurrently
from tests.events.conftest import deliveries
from tests.factories import OrganizationFactory

pytestmark = [on_postgresql, pytest.mark.django_db(transaction=True)]


def test_workers_draining_at_once_post_each_delivery_once(receiver):
    receiver.delay = 0.05  # the first claims are still posting when the others look
    organization = OrganizationFactory()
    for n in range(3):
        services.create_endpoint(organization=organization, url=f"{receiver.url}?{n}")
    for n in range(40):
        services.emit_event(organization_id=organization.pk, event="group.created", data={"n": n})
    queue = DeliveryQueue()

    def drain():
        done = 0
        while attempted := queue.run_due("racer"):
            done += attempted
        return done

    results = run_concurrently([drain for _ in range(6)])
    assert sum(results) == 120
    assert len(receiver.requests) == 120
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 120
    assert set(Delivery.objects.values_list("status", "attempts")) == {
        (DeliveryStatus.SUCCEEDED, 1)
    }


def test_concurrent_creates_never_pass_the_limit():
    organization = OrganizationFactory()
    for n in range(services.MAX_ENDPOINTS - 2):
        services.create_endpoint(organization=organization, url=f"https://example.com/{n}")
    results = run_concurrently(
        [
            lambda n=n: services.create_endpoint(
                organization=organization, url=f"https://example.org/{n}"
            )
            for n in range(6)
        ]
    )
    assert sum(isinstance(result, Endpoint) for result in results) == 2
    assert Endpoint.objects.live().filter(organization=organization).count() == 10


def test_concurrent_status_deliveries_report_each_move_once():
    """Two deliveries of the channel's webhook moving the same chats at once: each chat
    that moved is one message.status.update, not two."""
    from inbound.services.webhook import process_webhook
    from tests.inbound.conftest import envelope, status, statuses
    from tests.sending.factories import ChatFactory

    organization = OrganizationFactory(rate_limit=1_000_000)
    services.create_endpoint(organization=organization, url="https://example.com/hook")
    chats = ChatFactory.create_batch(20, organization=organization)
    payload = envelope(statuses(*(status(chat.wam_id, "delivered", 100) for chat in chats)))
    later = envelope(statuses(*(status(chat.wam_id, "delivered", 101) for chat in chats)))

    def deliver(body):
        from django.db import transaction

        with transaction.atomic():
            process_webhook(organization=organization, payload=body)

    run_concurrently([lambda: deliver(payload), lambda: deliver(later)])
    assert len(deliveries(event="message.status.update")) == 20


def test_workers_fanning_out_at_once_make_each_delivery_once():
    """More emissions than one fan-out takes, four threads fanning out together: every
    emission becomes one delivery per endpoint, none twice, none left behind."""
    from events.delivery import FAN_OUT_BATCH, fan_out
    from events.models import Emission

    organization = OrganizationFactory()
    for n in range(2):
        services.create_endpoint(organization=organization, url=f"https://example.com/{n}")
    emitted = FAN_OUT_BATCH * 3 + 7
    with services.event_batch():
        for n in range(emitted):
            services.emit_event(
                organization_id=organization.pk, event="group.created", data={"n": n}
            )

    def fan_out_until_empty():
        taken = 0
        while done := fan_out(50):
            taken += done
        return taken

    assert sum(run_concurrently([fan_out_until_empty for _ in range(4)])) == emitted
    assert not Emission.objects.exists()
    pairs = list(Delivery.objects.values_list("endpoint_id", "body"))
    assert len(pairs) == len(set(pairs)) == 2 * emitted


def test_workers_claiming_at_once_keep_to_the_caps(settings):
    """Six workers claim at once: together they never put more under way than the caps
    allow (the claims are serialized, each seeing the leases of those before it)."""
    from events.delivery import claim

    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 3
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION = 5
    organization = OrganizationFactory()
    endpoints = [
        services.create_endpoint(organization=organization, url=f"https://example.com/{n}")
        for n in range(2)
    ]
    for n in range(20):
        services.emit_event(organization_id=organization.pk, event="group.created", data={"n": n})
    deliveries()  # fanned out

    def claimer():
        return [item.endpoint_id for item in claim(10)]

    taken = [pk for claimed in run_concurrently([claimer for _ in range(6)]) for pk in claimed]
    assert len(taken) == 5
    assert max(taken.count(endpoint.pk) for endpoint in endpoints) == 3
    leased = Delivery.objects.filter(claimed_until__isnull=False)
    assert leased.count() == 5
