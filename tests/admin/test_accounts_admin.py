"""Organizations, API tokens and staff members in the admin, for superusers."""

import re

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.models import ApiToken, Organization
from accounts.services import authenticate_token, issue_token
from tests.admin.conftest import PASSWORD, new_organization_form

pytestmark = pytest.mark.django_db


def test_adding_an_organization_uses_the_service(admin_super, org_a):
    add = reverse("admin:accounts_organization_add")
    assert admin_super.post(add, new_organization_form("New Shop")).status_code == 302
    assert Organization.objects.filter(name="New Shop").exists()
    duplicate = admin_super.post(add, new_organization_form(org_a.name))
    assert "name" in duplicate.context["adminform"].form.errors


def test_organizations_cannot_be_deleted_in_the_admin(admin_super, org_a):
    url = reverse("admin:accounts_organization_delete", args=[org_a.pk])
    assert admin_super.post(url, {"post": "yes"}).status_code == 403
    assert Organization.objects.filter(pk=org_a.pk).exists()


def test_issuing_a_token_shows_it_once(admin_super, org_a):
    add = reverse("admin:accounts_apitoken_add")
    response = admin_super.post(add, {"organization": org_a.pk, "name": "shop"}, follow=True)
    [shown] = [str(m) for m in response.context["messages"] if "not be shown again" in str(m)]
    token = re.search(r"\S+$", shown).group(0)
    record = authenticate_token(token)
    assert record.organization == org_a
    assert record.name == "shop"
    again = admin_super.get(reverse("admin:accounts_apitoken_changelist"))
    assert token not in again.text
    assert record.digest not in again.text


def test_token_pages_never_show_the_digest(admin_super, org_a):
    record = issue_token(organization=org_a, name="shop").record
    listing = admin_super.get(reverse("admin:accounts_apitoken_changelist"))
    change = admin_super.get(reverse("admin:accounts_apitoken_change", args=[record.pk]))
    assert record.prefix in listing.text
    for page in (listing, change):
        assert record.digest not in page.text
    assert "digest" not in change.context["adminform"].form.fields


def test_revoking_tokens_with_the_action(admin_super, org_a):
    issued = issue_token(organization=org_a)
    admin_super.post(
        reverse("admin:accounts_apitoken_changelist"),
        {"action": "revoke_tokens", ACTION_CHECKBOX_NAME: [issued.record.pk]},
    )
    issued.record.refresh_from_db()
    assert issued.record.revoked_at is not None
    assert authenticate_token(issued.token) is None


def test_tokens_are_revoked_not_deleted(admin_super, org_a):
    record = issue_token(organization=org_a).record
    url = reverse("admin:accounts_apitoken_delete", args=[record.pk])
    assert admin_super.post(url, {"post": "yes"}).status_code == 403
    assert ApiToken.objects.filter(pk=record.pk).exists()


def test_a_superuser_adds_a_staff_member(admin_super, org_a):
    response = admin_super.post(
        reverse("admin:accounts_membership_add"),
        {
            "username": "carol",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "organization": org_a.pk,
        },
    )
    assert response.status_code == 302
    carol = get_user_model().objects.get(username="carol")
    assert carol.is_staff
    assert carol.membership.organization == org_a
    assert carol.has_perm("contacts.change_contact")


def test_a_taken_username_is_the_services_form_error(admin_super, staff_a, org_a):
    response = admin_super.post(
        reverse("admin:accounts_membership_add"),
        {
            "username": "alice",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "organization": org_a.pk,
        },
    )
    assert "username" in response.context["adminform"].form.errors


@pytest.mark.parametrize(
    "password, refusal",
    [("x", "too short"), ("password123", "too common"), ("caroline-smith", "too similar")],
)
def test_a_staff_members_password_must_pass_the_validators(admin_super, org_a, password, refusal):
    response = admin_super.post(
        reverse("admin:accounts_membership_add"),
        {
            "username": "caroline-smith",
            "password1": password,
            "password2": password,
            "organization": org_a.pk,
        },
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["password1"]
    assert any(refusal in error for error in errors), errors
    assert not get_user_model().objects.filter(username="caroline-smith").exists()


def test_a_password_set_in_the_users_admin_must_pass_the_validators(admin_super, staff_a):
    response = admin_super.post(
        reverse("admin:auth_user_password_change", args=[staff_a.pk]),
        {"password1": "alice", "password2": "alice"},
    )
    assert response.status_code == 200
    assert "too short" in str(response.context["form"].errors)
    staff_a.refresh_from_db()
    assert staff_a.check_password(PASSWORD)


def test_the_admin_has_the_products_name(admin_a):
    response = admin_a.get(reverse("admin:index"))
    assert "WhatsApp Business Messaging" in response.text
