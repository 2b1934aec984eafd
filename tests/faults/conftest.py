"""Fixtures for fault tests: the Cloud API stand-in with a short timeout, so that slow answers fail fast."""

import pytest

from business_numbers.gateway import sandbox
from devtools.cloud_api_server import FakeCloudApi


@pytest.fixture(autouse=True)
def empty_outbox():
    sandbox.clear_outbox()
    yield
    sandbox.clear_outbox()


@pytest.fixture
def graph(settings):
    with FakeCloudApi() as server:
        settings.WHATSAPP_GRAPH_URL = server.url
        settings.WHATSAPP_TIMEOUT = 0.5
        yield server
