"""Fixtures for campaigns: sending in the test's thread (one thread per sender task, as
SQLite in a test transaction needs), and a fast rate."""

import pytest

from tests.factories import ContactFactory, ContactGroupFactory

TEMPLATE = {"name": "order_update", "language": {"code": "en_US"}}


@pytest.fixture(autouse=True)
def inline_senders(settings):
    settings.CAMPAIGN_THREADS = 1
    settings.CAMPAIGN_SENDERS = 1


@pytest.fixture
def group(org_a):
    group = ContactGroupFactory(organization=org_a, name="Customers")
    for n in range(3):
        ContactFactory(organization=org_a, contact_group=group, phone=f"4915123456{n:03d}")
    return group


def sends(graph) -> list:
    """The messages that reached the fake Cloud API."""
    return [r for r in graph.requests if r.method == "POST" and r.path.endswith("/messages")]


def body(**values):
    return {"name": "Spring sale", "template": TEMPLATE, "rate": 1000, **values}
