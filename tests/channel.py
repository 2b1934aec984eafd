"""Channel fixtures for every test folder: the fake Cloud API on loopback and an
organization connected to it. Registered in tests/conftest.py as a plugin."""

import pytest

from business_numbers import services as number_services
from business_numbers.models import Number, forget_numbers
from devtools.cloud_api_server import FakeCloudApi

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
    number_services.configure_channel(
        organization=org_a,
        phone_number_id=PHONE_NUMBER_ID,
        access_token=ACCESS_TOKEN,
        business_account_id=BUSINESS_ACCOUNT_ID,
    )
    return org_a


def set_channel(organization, **values) -> Number:
    """Write the default number's settings as they are, bypassing the service's rules: a
    sandbox organization with webhook secrets, a Cloud API one missing its token."""
    forget_numbers(organization)
    number = Number.objects.default_for(organization)
    for field, value in values.items():
        setattr(number, field, value)
    number.save()
    forget_numbers(organization)  # the organization's numbers are read again
    return number


def stored_channel(organization) -> Number:
    """The organization's default number as the database has it now."""
    organization.refresh_from_db()
    forget_numbers(organization)
    return Number.objects.default_for(organization)
