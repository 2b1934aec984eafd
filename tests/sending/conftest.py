"""Fixtures for sending; the channel fixtures (`graph`, `cloud_org`) are in tests/channel.py."""

import pytest

from business_numbers.gateway import sandbox
from tests.channel import ACCESS_TOKEN, BUSINESS_ACCOUNT_ID, PHONE_NUMBER_ID
from tests.inbound.conftest import webhook_org  # noqa: F401  (a fixture)

__all__ = ["ACCESS_TOKEN", "BUSINESS_ACCOUNT_ID", "PHONE_NUMBER_ID"]


@pytest.fixture(autouse=True)
def empty_outbox():
    sandbox.clear_outbox()
    yield
    sandbox.clear_outbox()
