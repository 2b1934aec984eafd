"""Fixtures for event webhooks: a real receiver on loopback and endpoints pointing at it."""

import pytest
from standardwebhooks import Webhook

from devtools.webhook_receiver import WebhookReceiver
from events import services
from events.delivery import fan_out_all
from events.models import Delivery
from tests.background import make_due, run_tasks


@pytest.fixture(autouse=True)
def webhook_settings(settings):
    """Loopback receivers are allowed (the SSRF tests turn it off); retries come quickly."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT = 2
    settings.WEBHOOK_RETRY_SCHEDULE = [1, 2]


@pytest.fixture
def receiver():
    with WebhookReceiver() as server:
        yield server


@pytest.fixture
def endpoint(org_a, receiver):
    return services.create_endpoint(organization=org_a, url=receiver.url)


def run_all() -> int:
    """Run every task, retries included (made due at once), until none is left."""
    ran = 0
    while True:
        done = run_tasks()
        ran += done
        if not make_due() and not done:
            return ran


def verified(endpoint, request, *, secret: str | None = None) -> dict:
    """The request's body, verified with the Standard Webhooks library (raises if not)."""
    return Webhook(secret or endpoint.secret).verify(request.body, request.headers)


def deliveries(**filters):
    """The deliveries, once the emissions are fanned out as a worker would."""
    fan_out_all()
    return list(Delivery.objects.filter(**filters).order_by("id"))
