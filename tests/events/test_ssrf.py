"""Endpoints may only reach public addresses: refused when given (400 on `url`) and again
when delivering (the address connected to, after DNS), unless WEBHOOK_ALLOW_PRIVATE_URLS."""

import pytest

from events import services
from events.models import DeliveryStatus
from tests.events.conftest import deliveries, run_all

pytestmark = pytest.mark.django_db

CONTACT = {"phone": "+14155552671", "first_name": "Ada"}


@pytest.fixture
def private_refused(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://localhost:8000/hook",
        "http://10.0.0.7/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://224.0.0.1/hook",
        "http://[::127.0.0.1]/hook",
        "http://[64:ff9b::7f00:1]/hook",
        "http://[2002:7f00:1::]/hook",
    ],
)
def test_a_private_address_is_a_400_on_url(api, private_refused, url):
    response = api.post("/api/webhooks", {"url": url}, format="json")
    assert response.status_code == 400
    assert "url" in response.json()["errors"]


def test_a_name_registers_without_outbound_dns(api, private_refused, monkeypatch):
    def no_dns(*args, **kwargs):
        raise OSError("no outbound DNS here")

    monkeypatch.setattr("socket.getaddrinfo", no_dns)
    response = api.post("/api/webhooks", {"url": "https://crm.example.com/hook"}, format="json")
    assert response.status_code == 200


def test_an_edit_to_a_private_address_is_a_400(api, org_a, private_refused):
    endpoint = services.create_endpoint(organization=org_a, url="https://example.com/hook")
    response = api.patch(
        f"/api/webhooks/{endpoint.uuid}", {"url": "http://127.0.0.1/"}, format="json"
    )
    assert response.status_code == 400
    endpoint.refresh_from_db()
    assert endpoint.url == "https://example.com/hook"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_at_delivery_a_private_address_is_refused_and_the_delivery_fails(
    api, org_a, receiver, settings, host
):
    """The endpoint was accepted (the name resolved elsewhere then, or the rule was off):
    at delivery the connected address is checked again, after DNS."""
    url = receiver.url.replace("127.0.0.1", host)
    endpoint = services.create_endpoint(organization=org_a, url=url)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    api.post("/api/contacts", CONTACT, format="json")
    run_all()
    assert receiver.requests == []
    [delivery] = deliveries(endpoint=endpoint)
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 1  # refused for good: not retried
    assert "not a public address" in delivery.last_error
    assert delivery.next_attempt_at is None  # no retry


def test_a_redirect_is_not_followed(api, endpoint, receiver):
    receiver.fail_next(302)
    api.post("/api/contacts", CONTACT, format="json")
    from tests.background import run_tasks

    run_tasks()
    assert len(receiver.requests) == 1
    [delivery] = deliveries()
    assert delivery.status == DeliveryStatus.PENDING  # a 3xx is not a success
    assert delivery.response_status == 302
