"""Event webhook endpoints and deliveries in the admin: saved through events.services,
scoped to the staff member's organization, and "send again" on deliveries."""

import json

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse
from django.utils import timezone

from events import services
from events.delivery import fan_out_all
from events.models import Delivery, DeliveryStatus, Endpoint

pytestmark = pytest.mark.django_db

ENDPOINTS = reverse("admin:events_endpoint_changelist")
DELIVERIES = reverse("admin:events_delivery_changelist")


@pytest.fixture(autouse=True)
def private_allowed(settings):
    """No DNS look-up of example.com in tests; the private-address test turns it off."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True


def failed_delivery(organization) -> Delivery:
    endpoint = services.create_endpoint(organization=organization, url="https://example.com/h")
    services.emit_event(organization_id=organization.pk, event="group.created", data={"n": 1})
    fan_out_all()
    delivery = Delivery.objects.get(endpoint=endpoint)
    Delivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.FAILED, attempts=8)
    delivery.refresh_from_db()
    return delivery


def test_adding_an_endpoint_goes_through_the_service(admin_a, staff_a, org_a):
    response = admin_a.post(
        reverse("admin:events_endpoint_add"),
        {"url": "https://example.com/hook", "events": ["contact.created"], "is_active": "on"},
    )
    assert response.status_code == 302
    endpoint = Endpoint.objects.get()
    assert endpoint.organization == org_a
    assert endpoint.created_by == staff_a.pk
    assert endpoint.events == ["contact.created"]
    assert endpoint.secret.startswith("whsec_")


def test_a_private_url_is_a_form_error(admin_a, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    response = admin_a.post(
        reverse("admin:events_endpoint_add"), {"url": "http://169.254.169.254/", "events": []}
    )
    assert response.status_code == 200
    assert "url" in response.context["adminform"].form.errors
    assert not Endpoint.objects.exists()


def test_the_eleventh_endpoint_is_the_services_form_error(admin_a, org_a):
    for n in range(services.MAX_ENDPOINTS):
        services.create_endpoint(organization=org_a, url=f"https://example.com/{n}")
    response = admin_a.post(
        reverse("admin:events_endpoint_add"), {"url": "https://example.com/x", "events": []}
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["url"] == [services.TOO_MANY_ENDPOINTS]


def test_deleting_an_endpoint_is_soft(admin_a, org_a):
    endpoint = services.create_endpoint(organization=org_a, url="https://example.com/h")
    response = admin_a.post(
        reverse("admin:events_endpoint_delete", args=[endpoint.pk]), {"post": "yes"}
    )
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.deleted_at is not None


def test_contact_saved_in_the_admin_emits_its_event(admin_a, org_a):
    services.create_endpoint(organization=org_a, url="https://example.com/h")
    response = admin_a.post(
        reverse("admin:contacts_contact_add"),
        {"first_name": "Greta", "last_name": "", "phone": "+49 151 2345-6789"},
    )
    assert response.status_code == 302
    fan_out_all()
    [delivery] = Delivery.objects.all()
    assert json.loads(delivery.body)["data"]["first_name"] == "Greta"


def test_deliveries_list_only_the_organizations_own(admin_a, org_a, org_b):
    mine = failed_delivery(org_a)
    theirs = failed_delivery(org_b)
    response = admin_a.get(DELIVERIES)
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    assert admin_a.get(reverse("admin:events_delivery_change", args=[mine.pk])).status_code == 200
    assert admin_a.get(reverse("admin:events_delivery_change", args=[theirs.pk])).status_code == 404


def test_send_again_queues_one_more_attempt_with_the_same_id(admin_a, org_a):
    from events.delivery import claim

    delivery = failed_delivery(org_a)
    response = admin_a.post(
        DELIVERIES, {"action": "send_again", ACTION_CHECKBOX_NAME: [delivery.pk]}, follow=True
    )
    assert "1 delivery queued to be sent again." in response.text
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING
    [taken] = claim(10)  # due now, as a worker sees it
    assert (taken.pk, taken.attempt, taken.msg_id) == (delivery.pk, 9, delivery.msg_id)


def test_send_again_does_not_reach_another_organizations_delivery(admin_a, org_a, org_b):
    from events.delivery import claim

    theirs = failed_delivery(org_b)
    admin_a.post(DELIVERIES, {"action": "send_again", ACTION_CHECKBOX_NAME: [theirs.pk]})
    theirs.refresh_from_db()
    assert theirs.status == DeliveryStatus.FAILED
    assert claim(10) == []


def test_send_again_then_the_receiver_gets_it(org_a, settings):
    from devtools.webhook_receiver import WebhookReceiver
    from tests.background import run_tasks

    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    with WebhookReceiver() as receiver:
        endpoint = services.create_endpoint(organization=org_a, url=receiver.url)
        services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": 1})
        run_tasks()
        [delivery] = Delivery.objects.filter(endpoint=endpoint)
        assert services.send_again(delivery=delivery)
        run_tasks()
        assert len(receiver.requests) == 2
        assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.SUCCEEDED, 2)


def test_turned_on_again_by_the_admin_action(admin_a, org_a):
    endpoint = services.create_endpoint(organization=org_a, url="https://example.com/h")
    Endpoint.objects.filter(pk=endpoint.pk).update(
        is_active=False, disabled_reason="Turned off", disabled_at=timezone.now()
    )

    response = admin_a.post(
        ENDPOINTS,
        {"action": "turn_on", ACTION_CHECKBOX_NAME: [endpoint.pk]},
        follow=True,
    )

    assert response.status_code == 200
    endpoint.refresh_from_db()
    assert endpoint.is_active and endpoint.disabled_reason == "" and endpoint.disabled_at is None


def test_the_format_is_chosen_in_the_admin(admin_a, org_a):
    response = admin_a.post(
        reverse("admin:events_endpoint_add"),
        {"url": "https://example.com/hook", "events": [], "format": "swiftchats"},
    )
    assert response.status_code == 302
    endpoint = Endpoint.objects.get()
    assert endpoint.format == "swiftchats"
    response = admin_a.post(
        reverse("admin:events_endpoint_change", args=[endpoint.pk]),
        {"url": "https://example.com/hook", "events": [], "format": "standard", "is_active": "on"},
    )
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.format == "standard"
    assert admin_a.get(reverse("admin:events_endpoint_changelist")).status_code == 200
