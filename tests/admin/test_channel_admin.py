"""The WhatsApp channel on the organization's admin page: an inline of sending's settings,
saved through business_numbers.services.configure_channel, its secrets never shown back."""

import pytest
from django.urls import reverse

from accounts.models import Organization
from business_numbers.models import Number
from tests.admin.conftest import CHANNEL_INLINE, new_organization_form, organization_form
from tests.channel import set_channel, stored_channel
from tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db

ACCESS_TOKEN = "EAAGsecretaccesstoken"
APP_SECRET = "app-secret-value"


@pytest.fixture
def cloud_org(org_a):
    set_channel(
        org_a,
        kind="cloud_api",
        phone_number_id="1234567890",
        access_token=ACCESS_TOKEN,
        app_secret=APP_SECRET,
    )
    return org_a


def change_page(organization) -> str:
    return reverse("admin:accounts_organization_change", args=[organization.pk])


def channel_form(response):
    """The channel inline's one form, as the page was rendered."""
    [inline] = response.context["inline_admin_formsets"]
    [form] = inline.formset.forms
    return form


def test_the_organization_page_shows_the_channel_inline(admin_super, cloud_org):
    page = admin_super.get(change_page(cloud_org))

    assert page.status_code == 200
    form = channel_form(page)
    assert form.initial["kind"] == "cloud_api"
    assert form.initial["phone_number_id"] == "1234567890"
    assert f'name="{CHANNEL_INLINE}-0-phone_number_id"' in page.text


def test_channel_secrets_are_never_shown(admin_super, cloud_org):
    page = admin_super.get(change_page(cloud_org))
    assert page.status_code == 200
    assert ACCESS_TOKEN not in page.text
    assert APP_SECRET not in page.text
    assert "A value is stored; leave empty to keep it." in page.text
    listing = admin_super.get(reverse("admin:accounts_organization_changelist"))
    assert ACCESS_TOKEN not in listing.text


def test_empty_secret_fields_keep_the_stored_values(admin_super, cloud_org):
    response = admin_super.post(
        change_page(cloud_org), organization_form(cloud_org, rate_limit="30")
    )

    assert response.status_code == 302
    cloud_org.refresh_from_db()
    assert cloud_org.rate_limit == 30
    channel = stored_channel(cloud_org)
    assert (channel.access_token, channel.app_secret) == (ACCESS_TOKEN, APP_SECRET)


def test_a_new_secret_replaces_the_stored_one_and_is_not_echoed(admin_super, cloud_org):
    response = admin_super.post(
        change_page(cloud_org), organization_form(cloud_org, app_secret="rotated-secret")
    )

    assert response.status_code == 302
    assert stored_channel(cloud_org).app_secret == "rotated-secret"
    assert stored_channel(cloud_org).access_token == ACCESS_TOKEN
    assert "rotated-secret" not in admin_super.get(change_page(cloud_org)).text


def test_the_cloud_api_needs_credentials_a_form_error_from_the_service(admin_super, org_a):
    response = admin_super.post(
        change_page(org_a), organization_form(org_a, rate_limit="30", kind="cloud_api")
    )

    assert response.status_code == 200
    errors = channel_form(response).errors
    assert errors["phone_number_id"] == ["The phone number id is required for the Cloud API."]
    assert errors["access_token"] == ["The access token is required for the Cloud API."]
    assert "Please correct the errors below." in response.text
    # Nothing was saved: neither the channel nor the organization's own change.
    assert not Number.objects.exists()
    org_a.refresh_from_db()
    assert org_a.rate_limit is None


def test_a_refused_secret_is_not_rendered_back_with_the_error(admin_super, cloud_org):
    response = admin_super.post(
        change_page(cloud_org), organization_form(cloud_org, verify_token="has two words")
    )

    assert response.status_code == 200
    assert "verify_token" in channel_form(response).errors
    assert "has two words" not in response.text
    assert stored_channel(cloud_org).verify_token == ""


def test_switching_back_to_the_sandbox_clears_the_credentials(admin_super, cloud_org):
    response = admin_super.post(
        change_page(cloud_org), organization_form(cloud_org, kind="sandbox")
    )

    assert response.status_code == 302
    channel = stored_channel(cloud_org)
    assert channel.kind == "sandbox"
    assert (channel.phone_number_id, channel.access_token, channel.app_secret) == ("", "", "")


def test_credentials_typed_for_the_sandbox_are_refused_not_dropped(admin_super, org_a):
    response = admin_super.post(change_page(org_a), organization_form(org_a, app_secret="typed"))

    assert response.status_code == 200
    assert "The sandbox takes no credentials" in str(channel_form(response).non_field_errors())
    assert not Number.objects.exists()


def test_an_unchanged_channel_is_left_alone(admin_super, org_a):
    """An organization without settings is on the sandbox; saving its page adds none."""
    response = admin_super.post(change_page(org_a), organization_form(org_a, rate_limit="5"))

    assert response.status_code == 302
    assert not Number.objects.exists()
    assert stored_channel(org_a).kind == "sandbox"


def test_an_organization_added_with_cloud_api_credentials(admin_super, db):
    add = reverse("admin:accounts_organization_add")
    form = new_organization_form(
        "New Shop", kind="cloud_api", phone_number_id="42", access_token="token-42"
    )

    assert admin_super.post(add, form).status_code == 302

    channel = stored_channel(Organization.objects.get(name="New Shop"))
    assert (channel.kind, channel.phone_number_id, channel.access_token) == (
        "cloud_api",
        "42",
        "token-42",
    )


def test_an_organization_whose_channel_is_refused_is_not_added(admin_super, db):
    add = reverse("admin:accounts_organization_add")
    form = new_organization_form("New Shop", kind="cloud_api", phone_number_id="42")

    response = admin_super.post(add, form)

    assert response.status_code == 200
    assert "access_token" in channel_form(response).errors
    assert not Organization.objects.filter(name="New Shop").exists()


def test_the_list_shows_and_filters_by_channel(admin_super, cloud_org, org_b):
    listing = reverse("admin:accounts_organization_changelist")

    page = admin_super.get(listing)
    assert "WhatsApp Cloud API" in page.text
    assert "Sandbox (messages stay on this server)" in page.text  # org B, without settings

    on_cloud = admin_super.get(listing, {"channel": "cloud_api"}).context["cl"].result_list
    on_sandbox = admin_super.get(listing, {"channel": "sandbox"}).context["cl"].result_list
    assert list(on_cloud) == [cloud_org]
    assert list(on_sandbox) == [org_b]


def test_staff_members_see_their_numbers_read_only(admin_a, records_a):
    url = reverse("admin:business_numbers_number_change", args=[records_a["number"].pk])
    assert admin_a.get(url).status_code == 200
    assert admin_a.post(url, {"label": "Renamed"}).status_code == 403
    assert Number.objects.get(pk=records_a["number"].pk).label == "Alpha line"


@pytest.mark.parametrize("copies", [1, 5])
def test_the_organization_list_has_a_fixed_query_count(
    admin_super, django_assert_num_queries, copies
):
    for _ in range(copies):
        set_channel(OrganizationFactory(), kind="cloud_api")
        OrganizationFactory()  # on the sandbox, without settings
    # session, user, the two counts (shown and total), rows, their numbers (one query)
    with django_assert_num_queries(6):
        response = admin_super.get(reverse("admin:accounts_organization_changelist"))
    assert response.context["cl"].result_count == 2 * copies


def test_the_number_health_is_shown_read_only(admin_super, cloud_org):
    set_channel(
        cloud_org,
        quality_rating="RED",
        messaging_limit="TIER_10K",
        account_status="RESTRICTED",
        restrictions=[{"restriction_type": "RESTRICTED_BIZ_INITIATED_MESSAGING"}],
    )
    page = admin_super.get(change_page(cloud_org))
    assert page.status_code == 200
    for shown in ("TIER_10K", "RESTRICTED_BIZ_INITIATED_MESSAGING", "The number&#x27;s health"):
        assert shown in page.text
    assert "quality_rating" not in channel_form(page).fields  # read-only: not a form field


def test_the_service_window_is_set_and_cleared_alone(admin_super, cloud_org):
    response = admin_super.post(
        change_page(cloud_org), organization_form(cloud_org, enforce_service_window="on")
    )
    assert response.status_code == 302
    channel = stored_channel(cloud_org)
    assert channel.enforce_service_window is True
    assert (channel.kind, channel.access_token) == ("cloud_api", ACCESS_TOKEN)  # kept
    admin_super.post(
        change_page(cloud_org), organization_form(cloud_org, enforce_service_window=None)
    )
    assert stored_channel(cloud_org).enforce_service_window is False


def test_the_service_window_on_a_sandbox_organization(admin_super, org_a):
    response = admin_super.post(
        change_page(org_a), organization_form(org_a, enforce_service_window="on")
    )
    assert response.status_code == 302
    assert stored_channel(org_a).enforce_service_window is True
    assert stored_channel(org_a).kind == "sandbox"
