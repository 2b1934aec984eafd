"""Roles in the admin (docs/inbox.md, "Roles"), checked in one place
(accounts/admin_scoping.py): an agent opens the contacts and groups, uses canned replies
and templates without editing them, and gets a 403 from every other page, asked for by
its URL; a manager opens them all (superusers' own pages aside)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse

from accounts.models import Membership, Role
from accounts.services import create_staff_user
from tests.admin.conftest import PASSWORD, logged_in

pytestmark = pytest.mark.django_db

# Closed to agents: tokens, numbers and channel settings, event endpoints and
# deliveries, campaigns, imports and exports, the chats' log and the auto-replies,
# unhandled webhook items, opt-out words, staff, and the background tasks.
MANAGERS_ONLY = [
    ("accounts_apitoken", "changelist"),
    ("accounts_apitoken", "add"),
    ("accounts_staffmember", "changelist"),
    ("accounts_staffmember", "add"),
    ("business_numbers_number", "changelist"),
    ("events_endpoint", "changelist"),
    ("events_endpoint", "add"),
    ("events_delivery", "changelist"),
    ("campaigns_campaign", "changelist"),
    ("campaigns_campaign", "add"),
    ("contacts_contactimport", "changelist"),
    ("contacts_contact_import", None),
    ("contacts_contact_export", None),
    ("contacts_optoutwords", "changelist"),
    ("sending_chat", "changelist"),
    ("sending_autoreply", "changelist"),
    ("sending_unhandledwebhookitem", "changelist"),
    ("django_tasks_database_dbtaskresult", "changelist"),
]
# Superusers' alone: every organization's staff, and the organizations with their
# channel settings.
SUPERUSERS_ONLY = [
    ("accounts_membership", "changelist"),
    ("accounts_organization", "changelist"),
]
AGENTS_TOO = [
    ("contacts_contact", "changelist"),
    ("contacts_contact", "add"),
    ("contacts_contactgroup", "changelist"),
    ("contacts_contactgroup", "add"),
    ("canned_replies_cannedreply", "changelist"),
    ("canned_replies_cannedreply_test_message", None),
    ("business_numbers_messagetemplate", "changelist"),
]


def page(name: str, view: str | None) -> str:
    return reverse(f"admin:{name}_{view}" if view else f"admin:{name}")


def with_token_permissions(user):
    """API tokens are not among staff's apps: a superuser grants their permissions."""
    user.user_permissions.add(*Permission.objects.filter(content_type__model="apitoken"))
    return get_user_model().objects.get(pk=user.pk)  # no cached permissions


@pytest.fixture
def agent_a(org_a):
    agent = create_staff_user(
        username="agnes", organization=org_a, password=PASSWORD, role=Role.AGENT
    )
    return with_token_permissions(agent)  # the role refuses what the permissions grant


@pytest.fixture
def manager_a(staff_a):
    return with_token_permissions(staff_a)


@pytest.mark.parametrize("name,view", MANAGERS_ONLY + SUPERUSERS_ONLY)
def test_an_agent_gets_a_403(agent_a, records_a, name, view):
    assert logged_in(agent_a).get(page(name, view)).status_code == 403


@pytest.mark.parametrize("name,view", MANAGERS_ONLY + AGENTS_TOO)
def test_a_manager_opens_it(manager_a, records_a, name, view):
    response = logged_in(manager_a).get(page(name, view))

    assert response.status_code == 200, response.status_code


@pytest.mark.parametrize("name,view", SUPERUSERS_ONLY)
def test_a_manager_does_not_open_the_superusers_pages(staff_a, name, view):
    assert logged_in(staff_a).get(page(name, view)).status_code == 403


@pytest.mark.parametrize("name,view", AGENTS_TOO)
def test_an_agent_opens_it(agent_a, records_a, name, view):
    assert logged_in(agent_a).get(page(name, view)).status_code == 200


def test_an_agent_reads_a_canned_reply_and_a_template_but_does_not_edit_them(agent_a, records_a):
    agent = logged_in(agent_a)
    reply = records_a["cannedreply"]
    change = reverse("admin:canned_replies_cannedreply_change", args=[reply.pk])

    assert agent.get(change).status_code == 200  # shown read-only
    assert agent.post(change, {"name": "Mine now"}).status_code == 403
    assert agent.get(reverse("admin:canned_replies_cannedreply_add")).status_code == 403
    delete = reverse("admin:canned_replies_cannedreply_delete", args=[reply.pk])
    assert agent.post(delete, {"post": "yes"}).status_code == 403
    reply.refresh_from_db()
    assert reply.name == "Alpha reply" and reply.deleted_at is None
    sync = reverse("admin:business_numbers_messagetemplate_sync")
    assert agent.post(sync).status_code == 403


def test_an_agent_edits_a_contact(agent_a, records_a):
    contact = records_a["contact"]
    change = reverse("admin:contacts_contact_change", args=[contact.pk])

    assert logged_in(agent_a).get(change).status_code == 200


def test_an_agent_cannot_open_a_record_page_by_its_url_either(agent_a, records_a):
    agent = logged_in(agent_a)
    for model, name in [("endpoint", "events_endpoint"), ("campaign", "campaigns_campaign")]:
        url = reverse(f"admin:{name}_change", args=[records_a[model].pk])
        assert agent.get(url).status_code == 403


def test_a_manager_sets_a_members_role(staff_a, agent_a, staff_b):
    manager = logged_in(staff_a)
    listing = manager.get(reverse("admin:accounts_staffmember_changelist"))
    assert b"agnes" in listing.content and b"bob" not in listing.content  # their own only

    change = reverse("admin:accounts_staffmember_change", args=[agent_a.membership.pk])
    response = manager.post(change, {"role": "manager"})

    assert response.status_code == 302
    assert Membership.objects.get(user=agent_a).role == Role.MANAGER
    theirs = reverse("admin:accounts_staffmember_change", args=[staff_b.membership.pk])
    assert manager.get(theirs).status_code == 404


def test_a_manager_cannot_change_their_own_role(staff_a):
    manager = logged_in(staff_a)
    change = reverse("admin:accounts_staffmember_change", args=[staff_a.membership.pk])

    manager.post(change, {"role": "agent"})

    assert Membership.objects.get(user=staff_a).role == Role.MANAGER


def test_a_manager_adds_an_agent(staff_a, org_a):
    response = logged_in(staff_a).post(
        reverse("admin:accounts_staffmember_add"),
        {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "role": "agent"},
    )

    assert response.status_code == 302, response.content
    added = Membership.objects.get(user__username="newbie")
    assert added.organization == org_a and added.role == Role.AGENT
    assert added.user.is_staff


def test_the_role_is_read_with_the_organization_once_per_request(
    agent_a, django_assert_max_num_queries
):
    # session, user, membership (with its role), then the page's own queries.
    agent = logged_in(agent_a)
    agent.get(reverse("admin:contacts_contact_changelist"))
    with django_assert_max_num_queries(8):
        assert agent.get(reverse("admin:contacts_contactgroup_changelist")).status_code == 200
