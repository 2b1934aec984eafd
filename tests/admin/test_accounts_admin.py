"""Organizations, API tokens and staff members in the admin, for superusers."""

import re

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.models import ApiToken, Channel, Organization
from accounts.services import authenticate_token, issue_token
from tests.admin.conftest import PASSWORD

pytestmark = pytest.mark.django_db

ACCESS_TOKEN = "EAAGsecretaccesstoken"
APP_SECRET = "app-secret-value"


def organization_form(organization, **changes) -> dict:
    return {
        "name": organization.name,
        "rate_limit": "",
        "channel": organization.channel,
        "phone_number_id": organization.phone_number_id,
        "business_account_id": organization.business_account_id,
        "access_token": "",
        "app_secret": "",
        "verify_token": "",
        **changes,
    }


@pytest.fixture
def cloud_org(org_a):
    org_a.channel = Channel.CLOUD_API
    org_a.phone_number_id = "1234567890"
    org_a.access_token = ACCESS_TOKEN
    org_a.app_secret = APP_SECRET
    org_a.save()
    return org_a


def test_channel_secrets_are_never_shown(admin_super, cloud_org):
    change = reverse("admin:accounts_organization_change", args=[cloud_org.pk])
    page = admin_super.get(change)
    assert page.status_code == 200
    assert ACCESS_TOKEN not in page.text
    assert APP_SECRET not in page.text
    assert "A value is stored; leave empty to keep it." in page.text
    listing = admin_super.get(reverse("admin:accounts_organization_changelist"))
    assert ACCESS_TOKEN not in listing.text


def test_empty_secret_fields_keep_the_stored_values(admin_super, cloud_org):
    change = reverse("admin:accounts_organization_change", args=[cloud_org.pk])
    response = admin_super.post(change, organization_form(cloud_org, rate_limit="30"))
    assert response.status_code == 302
    cloud_org.refresh_from_db()
    assert cloud_org.rate_limit == 30
    assert (cloud_org.access_token, cloud_org.app_secret) == (ACCESS_TOKEN, APP_SECRET)


def test_a_new_secret_replaces_the_stored_one_and_is_not_echoed(admin_super, cloud_org):
    change = reverse("admin:accounts_organization_change", args=[cloud_org.pk])
    admin_super.post(change, organization_form(cloud_org, app_secret="rotated-secret"))
    cloud_org.refresh_from_db()
    assert cloud_org.app_secret == "rotated-secret"
    assert "rotated-secret" not in admin_super.get(change).text


def test_the_cloud_api_needs_credentials_a_form_error_from_the_service(admin_super, org_a):
    change = reverse("admin:accounts_organization_change", args=[org_a.pk])
    response = admin_super.post(change, organization_form(org_a, channel=Channel.CLOUD_API))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "phone_number_id" in errors
    assert "access_token" in errors
    org_a.refresh_from_db()
    assert org_a.channel == Channel.SANDBOX


def test_switching_back_to_the_sandbox_clears_the_credentials(admin_super, cloud_org):
    change = reverse("admin:accounts_organization_change", args=[cloud_org.pk])
    admin_super.post(change, organization_form(cloud_org, channel=Channel.SANDBOX))
    cloud_org.refresh_from_db()
    assert cloud_org.channel == Channel.SANDBOX
    assert cloud_org.access_token == ""


def test_adding_an_organization_uses_the_service(admin_super, org_a):
    add = reverse("admin:accounts_organization_add")
    blank = {"channel": Channel.SANDBOX, "rate_limit": ""}
    assert admin_super.post(add, {**blank, "name": "New Shop"}).status_code == 302
    assert Organization.objects.filter(name="New Shop").exists()
    duplicate = admin_super.post(add, {**blank, "name": org_a.name})
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


def test_the_admin_has_the_products_name(admin_a):
    response = admin_a.get(reverse("admin:index"))
    assert "WhatsApp Business Messaging" in response.text
