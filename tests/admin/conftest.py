"""Fixtures for the admin tests: a staff member in each organization, a superuser, and
the same kinds of records in both organizations, named so that a page showing
organization B's records to A's staff member is easy to catch."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.services import create_staff_user
from business_numbers.models import Number
from contacts.models import ContactImport
from events.models import Endpoint
from tests.channel import set_channel
from tests.factories import (
    CannedReplyFactory,
    ContactFactory,
    ContactGroupFactory,
    create_campaign_record,
    create_chat,
    create_template,
)

PASSWORD = "correct horse battery staple"
# The prefix of the channel inline's fields on the organization page: the relation's name.
CHANNEL_INLINE = "numbers"


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff_a(org_a):
    return create_staff_user(username="alice", organization=org_a, password=PASSWORD)


@pytest.fixture
def staff_b(org_b):
    return create_staff_user(username="bob", organization=org_b, password=PASSWORD)


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_a(staff_a) -> Client:
    """A browser session of organization A's staff member."""
    return logged_in(staff_a)


@pytest.fixture
def admin_super(superuser) -> Client:
    return logged_in(superuser)


def make_records(organization, word: str) -> dict:
    """One of each record for an organization; every name carries `word`."""
    group = ContactGroupFactory(organization=organization, name=f"{word} group")
    contact = ContactFactory(
        organization=organization,
        first_name=word,
        last_name="Contact",
        email=f"{word.lower()}@example.com",
        contact_group=group,
    )
    reply = CannedReplyFactory(
        organization=organization,
        name=f"{word} reply",
        trigger=f"{word.lower()} hours",
        metadata={"type": "text", "data": {"text": f"{word} is open 9 to 5."}},
    )
    chat = create_chat(
        organization=organization,
        contact=contact,
        wam_id=f"wamid.{word}",
        status="failed",
        error_code=131047,
        error_title=f"{word} re-engagement message",
    )
    template = create_template(
        organization=organization, name=f"{word.lower()}_welcome", language="en_US"
    )
    endpoint = Endpoint.objects.create(
        organization=organization, url=f"https://{word.lower()}.example/hook"
    )
    number = set_channel(
        organization,
        label=f"{word} line",
        kind="cloud_api",
        phone_number_id=f"{organization.pk}{int.from_bytes(word.encode(), 'big') % 10**9}",
    )
    return {
        "number": number,
        "endpoint": endpoint,
        "contact": contact,
        "contactgroup": group,
        "cannedreply": reply,
        "chat": chat,
        "messagetemplate": template,
        "campaign": create_campaign_record(
            organization=organization,
            name=f"{word} campaign",
            template={"name": "welcome", "language": {"code": "en_US"}},
            phones=["+4915123456000"],
            rate=80,
        ),
        "contactimport": ContactImport.objects.create(
            organization=organization, file_name=f"{word.lower()}.csv", total=1
        ),
    }


@pytest.fixture
def records_a(org_a) -> dict:
    return make_records(org_a, "Alpha")


@pytest.fixture
def records_b(org_b) -> dict:
    return make_records(org_b, "Bravo")


def channel_inline(organization=None, **changes) -> dict:
    """The organization page's channel inline as a browser posts it: the settings the page
    shows (the secrets always empty), with `changes` typed over them."""
    stored = Number.objects.filter(organization=organization).first() if organization else None
    shown = {
        "kind": stored.kind if stored else "sandbox",
        "phone_number_id": stored.phone_number_id if stored else "",
        "business_account_id": stored.business_account_id if stored else "",
        "access_token": "",
        "app_secret": "",
        "verify_token": "",
        **changes,
    }
    # A checkbox is posted only when ticked: None in `changes` unticks it.
    if stored and stored.enforce_service_window and "enforce_service_window" not in changes:
        shown["enforce_service_window"] = "on"
    shown = {name: value for name, value in shown.items() if value is not None}
    data = {
        f"{CHANNEL_INLINE}-TOTAL_FORMS": "1",
        f"{CHANNEL_INLINE}-INITIAL_FORMS": "1" if stored else "0",
        f"{CHANNEL_INLINE}-MIN_NUM_FORMS": "0",
        f"{CHANNEL_INLINE}-MAX_NUM_FORMS": "1",
        f"{CHANNEL_INLINE}-0-id": str(stored.pk) if stored else "",
        f"{CHANNEL_INLINE}-0-organization": str(organization.pk) if organization else "",
    }
    data.update({f"{CHANNEL_INLINE}-0-{name}": value for name, value in shown.items()})
    return data


def organization_form(organization, *, rate_limit="", **channel) -> dict:
    """The organization's change page as posted, its channel settings changed by `channel`."""
    return {
        "name": organization.name,
        "rate_limit": rate_limit,
        **channel_inline(organization, **channel),
    }


def new_organization_form(name: str, **channel) -> dict:
    """The add page as posted: a name, and the channel inline left as shown or changed."""
    return {"name": name, "rate_limit": "", **channel_inline(None, **channel)}
