"""Fixtures for the admin tests: a staff member in each organization, a superuser, and
the same kinds of records in both organizations, named so that a page showing
organization B's records to A's staff member is easy to catch."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.services import create_staff_user
from sending.models import Chat, MessageTemplate
from tests.factories import CannedReplyFactory, ContactFactory, ContactGroupFactory

PASSWORD = "correct horse battery staple"


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
    chat = Chat.objects.create(
        organization=organization,
        contact=contact,
        wam_id=f"wamid.{word}",
        status="failed",
        error_code=131047,
        error_title=f"{word} re-engagement message",
    )
    template = MessageTemplate.objects.create(
        organization=organization, name=f"{word.lower()}_welcome", language="en_US"
    )
    return {
        "contact": contact,
        "contactgroup": group,
        "cannedreply": reply,
        "chat": chat,
        "messagetemplate": template,
    }


@pytest.fixture
def records_a(org_a) -> dict:
    return make_records(org_a, "Alpha")


@pytest.fixture
def records_b(org_b) -> dict:
    return make_records(org_b, "Bravo")
