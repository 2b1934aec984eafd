"""Fixtures for the inbox: an organization receiving signed webhooks and sending through
the loopback Cloud API, customers writing in, and staff members of both roles."""

import time

import pytest

from accounts.models import Role
from accounts.services import create_staff_user
from events import services as event_services
from sending.models import Conversation
from tests.channel import PHONE_NUMBER_ID, set_channel
from tests.inbound.conftest import APP_SECRET, deliver, envelope, text_message

CUSTOMER = "14155552671"


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def inbox_org(cloud_org):
    """Organization A on the loopback Cloud API, receiving its signed webhooks."""
    set_channel(cloud_org, app_secret=APP_SECRET, phone_number_id=PHONE_NUMBER_ID)
    return cloud_org


@pytest.fixture
def listening(inbox_org):
    """An endpoint for every event: emissions are written."""
    return event_services.create_endpoint(organization=inbox_org, url="https://example.com/hook")


def writes(organization, text: str = "Hello?", *, sender: str = CUSTOMER, at: int | None = None):
    """The customer writes now (WhatsApp's timestamp `at`, else now); the webhook's answer."""
    message = text_message(text, sender=sender)
    message["messages"][0]["timestamp"] = str(at if at is not None else int(time.time()))
    response = deliver(organization, envelope(message))
    assert response.status_code == 200, response.content
    return response


def conversation_of(organization, phone: str = CUSTOMER) -> Conversation:
    return Conversation.objects.select_related("contact", "number", "assignee").get(
        organization=organization, contact__phone=phone
    )


@pytest.fixture
def manager(inbox_org):
    return create_staff_user(username="mia", organization=inbox_org, password="x-Pass-12345")


@pytest.fixture
def agent(inbox_org):
    return create_staff_user(
        username="ada", organization=inbox_org, password="x-Pass-12345", role=Role.AGENT
    )


@pytest.fixture
def other_agent(inbox_org):
    return create_staff_user(
        username="ari", organization=inbox_org, password="x-Pass-12345", role=Role.AGENT
    )
