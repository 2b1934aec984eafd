"""A staff member of organization A reaches none of organization B's records, by any
admin page, URL or POST, for every model registered in the admin."""

import pytest
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from accounts.admin_scoping import OrganizationScopedAdmin
from accounts.models import ApiToken, Organization, OrganizationRecord
from accounts.services import issue_token
from contacts.models import Contact, ContactGroup

pytestmark = pytest.mark.django_db

# Model key -> app label; every organization record registered in the admin.
MODELS = {
    "contact": "contacts",
    "contactgroup": "contacts",
    "cannedreply": "canned_replies",
    "chat": "sending",
    "messagetemplate": "business_numbers",
    "number": "business_numbers",
    "campaign": "campaigns",
    "endpoint": "events",
    "contactimport": "contacts",
}
EDITABLE = ["contact", "contactgroup", "cannedreply", "endpoint"]
# The text each kind of record shows in a list, per organization.
MARKERS = {
    "contact": ("Alpha", "Bravo"),
    "contactgroup": ("Alpha group", "Bravo group"),
    "cannedreply": ("Alpha reply", "Bravo reply"),
    "chat": ("Alpha Contact", "Bravo Contact"),
    "messagetemplate": ("alpha_welcome", "bravo_welcome"),
    "number": ("Alpha line", "Bravo line"),
    "campaign": ("Alpha campaign", "Bravo campaign"),
    "endpoint": ("https://alpha.example/hook", "https://bravo.example/hook"),
    "contactimport": ("alpha.csv", "bravo.csv"),
}


def url(model: str, view: str, *args) -> str:
    return reverse(f"admin:{MODELS[model]}_{model}_{view}", args=args)


def is_live(record) -> bool:
    return type(record).objects.live().filter(pk=record.pk).exists()


def test_every_organization_record_in_the_admin_is_scoped_and_tested_here():
    records = {
        model: model_admin
        for model, model_admin in admin.site._registry.items()
        if issubclass(model, OrganizationRecord)
    }
    assert {model._meta.model_name for model in records} == set(MODELS)
    for model_admin in [*records.values(), admin.site._registry[ApiToken]]:
        assert isinstance(model_admin, OrganizationScopedAdmin)


@pytest.mark.parametrize("model", MODELS)
def test_list_shows_only_own_organizations_records(admin_a, records_a, records_b, model):
    response = admin_a.get(url(model, "changelist"))
    assert response.status_code == 200
    mine, theirs = MARKERS[model]
    assert mine in response.text
    assert theirs not in response.text
    assert response.context["cl"].result_count == 1


@pytest.mark.parametrize("model", MODELS)
def test_search_does_not_find_other_organizations_records(admin_a, records_a, records_b, model):
    response = admin_a.get(url(model, "changelist"), {"q": "Bravo"})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 0


@pytest.mark.parametrize("model", MODELS)
def test_crafted_organization_filter_shows_nothing_of_theirs(
    admin_a, org_b, records_a, records_b, model
):
    response = admin_a.get(url(model, "changelist"), {"organization__id__exact": org_b.pk})
    assert MARKERS[model][1] not in response.text


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("view", ["change", "history", "delete"])
def test_other_organizations_record_is_not_found_by_url(admin_a, records_b, model, view):
    response = admin_a.get(url(model, view, records_b[model].pk))
    assert response.status_code == 404


@pytest.mark.parametrize("model", MODELS)
def test_own_record_opens(admin_a, records_a, model):
    response = admin_a.get(url(model, "change", records_a[model].pk))
    assert response.status_code == 200
    assert MARKERS[model][0] in response.text


@pytest.mark.parametrize("model", EDITABLE)
def test_changing_other_organizations_record_by_post_is_not_found(admin_a, records_b, model):
    record = records_b[model]
    response = admin_a.post(
        url(model, "change", record.pk),
        {"name": "Taken over", "first_name": "Taken", "phone": "+4915199999999"},
    )
    assert response.status_code == 404
    record.refresh_from_db()
    assert "Taken" not in str(record)


@pytest.mark.parametrize("model", MODELS)
def test_deleting_other_organizations_record_by_post_is_not_found(admin_a, records_b, model):
    response = admin_a.post(url(model, "delete", records_b[model].pk), {"post": "yes"})
    assert response.status_code == 404
    assert is_live(records_b[model])


@pytest.mark.parametrize("model", EDITABLE)
def test_bulk_delete_leaves_other_organizations_records(admin_a, records_a, records_b, model):
    mine, theirs = records_a[model], records_b[model]
    response = admin_a.post(
        url(model, "changelist"),
        {"action": "delete_selected", ACTION_CHECKBOX_NAME: [mine.pk, theirs.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert not is_live(mine)
    assert is_live(theirs)


@pytest.mark.parametrize("model", EDITABLE)
def test_bulk_delete_confirmation_lists_only_own_records(admin_a, records_a, records_b, model):
    response = admin_a.post(
        url(model, "changelist"),
        {
            "action": "delete_selected",
            ACTION_CHECKBOX_NAME: [records_a[model].pk, records_b[model].pk],
        },
    )
    assert response.status_code == 200
    assert MARKERS[model][0] in response.text
    assert MARKERS[model][1] not in response.text


@pytest.mark.parametrize("model", EDITABLE)
def test_bulk_delete_of_only_their_records_deletes_nothing(admin_a, records_b, model):
    response = admin_a.post(
        url(model, "changelist"),
        {"action": "delete_selected", ACTION_CHECKBOX_NAME: [records_b[model].pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert is_live(records_b[model])


def test_contact_form_offers_only_own_groups(admin_a, records_a, records_b):
    response = admin_a.get(url("contact", "add"))
    choices = response.context["adminform"].form.fields["contact_group"].queryset
    assert list(choices) == [records_a["contactgroup"]]
    assert "Bravo group" not in response.text


def test_contact_with_other_organizations_group_is_a_form_error(admin_a, records_b):
    response = admin_a.post(
        url("contact", "add"),
        {
            "first_name": "Mallory",
            "phone": "+4915100000001",
            "contact_group": records_b["contactgroup"].pk,
        },
    )
    assert response.status_code == 200
    assert "contact_group" in response.context["adminform"].form.errors
    assert not Contact.objects.filter(first_name="Mallory").exists()


def test_group_filter_offers_only_own_groups(admin_a, records_a, records_b):
    response = admin_a.get(url("contact", "changelist"))
    assert "Alpha group" in response.text
    assert "Bravo group" not in response.text


def test_autocomplete_finds_only_own_groups(admin_a, records_a, records_b):
    response = admin_a.get(
        reverse("admin:autocomplete"),
        {"app_label": "contacts", "model_name": "contact", "field_name": "contact_group"},
    )
    assert response.status_code == 200
    assert [item["text"] for item in response.json()["results"]] == ["Alpha group"]


def test_autocomplete_of_organizations_is_refused_to_staff(admin_a, records_a, records_b):
    response = admin_a.get(
        reverse("admin:autocomplete"),
        {"app_label": "contacts", "model_name": "contact", "field_name": "organization"},
    )
    assert response.status_code == 403


def test_raw_id_lookup_popup_lists_only_own_groups(admin_a, records_a, records_b):
    response = admin_a.get(url("contactgroup", "changelist"), {"_to_field": "id", "_popup": 1})
    assert response.status_code == 200
    assert "Alpha group" in response.text
    assert "Bravo group" not in response.text


def test_history_of_own_record_shows_its_changes(admin_a, records_a):
    group = records_a["contactgroup"]
    admin_a.post(url("contactgroup", "change", group.pk), {"name": "Alpha customers"})
    response = admin_a.get(url("contactgroup", "history", group.pk))
    assert response.status_code == 200
    assert "Changed Name." in response.text


def test_new_records_get_the_staff_members_organization(admin_a, org_a):
    response = admin_a.get(url("contactgroup", "add"))
    assert "organization" not in response.context["adminform"].form.fields
    admin_a.post(url("contactgroup", "add"), {"name": "Newcomers", "organization": 999})
    assert ContactGroup.objects.get(name="Newcomers").organization == org_a


def test_staff_without_membership_sees_nothing(staff_a, records_a):
    staff_a.membership.delete()
    from tests.admin.conftest import logged_in

    client = logged_in(staff_a)
    index = client.get(reverse("admin:index"))
    assert index.status_code == 200
    assert index.context["app_list"] == []
    for model in MODELS:
        assert client.get(url(model, "changelist")).status_code == 403
    assert client.get(url("contact", "change", records_a["contact"].pk)).status_code == 404


@pytest.mark.parametrize(
    "name", ["accounts_organization", "accounts_apitoken", "accounts_membership"]
)
def test_staff_cannot_reach_organizations_tokens_or_members(admin_a, name):
    assert admin_a.get(reverse(f"admin:{name}_changelist")).status_code == 403
    assert admin_a.get(reverse(f"admin:{name}_add")).status_code == 403


def test_staff_given_token_permissions_see_only_their_tokens(staff_a, org_a, org_b):
    from django.contrib.auth.models import Permission

    from tests.admin.conftest import logged_in

    staff_a.user_permissions.add(*Permission.objects.filter(content_type__model="apitoken"))
    mine = issue_token(organization=org_a, name="alpha key").record
    theirs = issue_token(organization=org_b, name="bravo key").record
    client = logged_in(staff_a)
    listing = client.get(reverse("admin:accounts_apitoken_changelist"))
    assert "alpha key" in listing.text
    assert "bravo key" not in listing.text
    assert (
        client.get(reverse("admin:accounts_apitoken_change", args=[theirs.pk])).status_code == 404
    )
    client.post(
        reverse("admin:accounts_apitoken_changelist"),
        {"action": "revoke_tokens", ACTION_CHECKBOX_NAME: [mine.pk, theirs.pk]},
    )
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.revoked_at is not None
    assert theirs.revoked_at is None


def test_superuser_sees_every_organization_with_a_filter(admin_super, org_a, records_a, records_b):
    response = admin_super.get(url("contact", "changelist"))
    assert "Alpha" in response.text
    assert "Bravo" in response.text
    filtered = admin_super.get(url("contact", "changelist"), {"organization__id__exact": org_a.pk})
    assert filtered.context["cl"].result_count == 1
    assert "Bravo Contact" not in filtered.text


def test_superuser_adds_a_record_for_the_organization_they_pick(admin_super, org_b):
    admin_super.post(
        url("contactgroup", "add"), {"organization": org_b.pk, "name": "Picked by root"}
    )
    assert ContactGroup.objects.get(name="Picked by root").organization == org_b


def test_superusers_contact_group_must_belong_to_the_same_organization(
    admin_super, org_b, records_a
):
    response = admin_super.post(
        url("contact", "add"),
        {
            "organization": org_b.pk,
            "first_name": "Crossed",
            "phone": "+4915100000002",
            "contact_group": records_a["contactgroup"].pk,
        },
    )
    assert response.status_code == 200
    assert "contact_group" in response.context["adminform"].form.errors
    assert not Organization.objects.get(pk=org_b.pk).contact_set.exists()


def test_superusers_group_choices_say_whose_each_group_is(admin_super, records_a, records_b):
    response = admin_super.get(url("contact", "add"))
    assert "Alpha group (Organization A)" in response.text
    assert "Bravo group (Organization B)" in response.text
