"""Channel fixtures for every test folder: the fake Cloud API on loopback and an
organization connected to it. Registered in tests/conftest.py as a plugin."""

import pytest

from business_numbers.models import Number
from devtools.cloud_api_server import FakeCloudApi
from sending import services

PHONE_NUMBER_ID = "106540352242922"
BUSINESS_ACCOUNT_ID = "102290129340398"
ACCESS_TOKEN = "EAAJB-secret-access-token-do-not-leak"


@pytest.fixture
def graph(settings):
    """The fake Cloud API, with WHATSAPP_GRAPH_URL pointing at it."""
    with FakeCloudApi() as server:
        settings.WHATSAPP_GRAPH_URL = server.url
        settings.WHATSAPP_TIMEOUT = 2
        yield server


@pytest.fixture
def cloud_org(org_a, graph):
    """Organization A, sending through the fake Cloud API."""
    services.configure_channel(
        organization=org_a,
        phone_number_id=PHONE_NUMBER_ID,
        access_token=ACCESS_TOKEN,
        business_account_id=BUSINESS_ACCOUNT_ID,
    )
    return org_a


def set_channel(organization, **values) -> Number:
    """Write channel settings as they are, bypassing the service's rules: a sandbox
    organization with webhook secrets, a Cloud API one missing its token."""
    channel, _ = Number.objects.update_or_create(organization=organization, defaults=values)
    channel.organization = organization  # the organization's cached settings are these
    return channel


def stored_channel(organization) -> Number:
    """The organization's channel settings as the database has them now."""
    organization.refresh_from_db()
    return Number.objects.default_for(organization)
