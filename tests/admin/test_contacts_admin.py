"""Contacts and groups in the admin follow the API's rules, through contacts.services."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from contacts.models import Contact, ContactGroup
from contacts.services import DUPLICATE_GROUP, DUPLICATE_PHONE
from messaging_project.core.phones import INVALID_PHONE, LOCAL_ONLY_PHONE
from tests.factories import ContactFactory, ContactGroupFactory

pytestmark = pytest.mark.django_db

ADD = reverse("admin:contacts_contact_add")
CONTACTS = reverse("admin:contacts_contact_changelist")
GROUPS = reverse("admin:contacts_contactgroup_changelist")


def change_url(contact) -> str:
    return reverse("admin:contacts_contact_change", args=[contact.pk])


def contact_form(**changes) -> dict:
    return {"first_name": "Greta", "last_name": "", "phone": "+49 151 2345-6789", **changes}


def form_errors(response) -> dict:
    return response.context["adminform"].form.errors


def test_adding_a_contact_normalises_the_phone_and_stamps_the_organization(admin_a, staff_a, org_a):
    response = admin_a.post(ADD, contact_form(city="Berlin", email=""))
    assert response.status_code == 302
    contact = Contact.objects.get(first_name="Greta")
    assert contact.phone == "4915123456789"
    assert contact.organization == org_a
    assert contact.created_by == staff_a.pk
    assert contact.last_name is None
    assert contact.email is None
    assert contact.address == {
        "street": None,
        "city": "Berlin",
        "state": None,
        "zip": None,
        "country": None,
    }


@pytest.mark.parametrize("phone", ["12", "+49 abc", "+999 1234 5678"])
def test_an_invalid_phone_is_a_form_error(admin_a, phone):
    response = admin_a.post(ADD, contact_form(phone=phone))
    assert response.status_code == 200
    assert form_errors(response)["phone"] == [INVALID_PHONE]
    assert not Contact.objects.exists()


def test_first_name_is_required_on_add(admin_a):
    response = admin_a.post(ADD, contact_form(first_name=""))
    assert "first_name" in form_errors(response)


def test_a_duplicate_phone_is_the_services_form_error(admin_a, org_a):
    ContactFactory(organization=org_a, phone="4915123456789")
    response = admin_a.post(ADD, contact_form())
    assert response.status_code == 200
    assert form_errors(response)["phone"] == [DUPLICATE_PHONE]
    assert Contact.objects.count() == 1


def test_a_duplicate_phone_on_change_is_a_form_error_and_changes_nothing(admin_a, org_a):
    ContactFactory(organization=org_a, phone="4915123456789")
    other = ContactFactory(organization=org_a, phone="4915100000000", first_name="Otto")
    response = admin_a.post(change_url(other), contact_form(first_name="Renamed"))
    assert form_errors(response)["phone"] == [DUPLICATE_PHONE]
    other.refresh_from_db()
    assert (other.first_name, other.phone) == ("Otto", "4915100000000")


def test_the_same_phone_in_another_organization_is_fine(admin_a, org_b):
    ContactFactory(organization=org_b, phone="4915123456789")
    assert admin_a.post(ADD, contact_form()).status_code == 302


def test_a_deleted_contacts_phone_is_free_again(admin_a, org_a):
    gone = ContactFactory(organization=org_a, phone="4915123456789")
    admin_a.post(reverse("admin:contacts_contact_delete", args=[gone.pk]), {"post": "yes"})
    assert admin_a.post(ADD, contact_form()).status_code == 302


def test_change_form_shows_the_phone_with_plus_and_keeps_the_address(admin_a, org_a):
    contact = ContactFactory(
        organization=org_a, phone="4915123456789", address={"city": "Hamburg", "zip": "20095"}
    )
    page = admin_a.get(change_url(contact))
    assert 'value="+4915123456789"' in page.text
    response = admin_a.post(
        change_url(contact),
        {"first_name": "Hanna", "phone": "+4915123456789", "city": "Hamburg", "zip": "20095"},
    )
    assert response.status_code == 302
    contact.refresh_from_db()
    assert contact.first_name == "Hanna"
    assert contact.address["city"] == "Hamburg"


def test_deleting_a_contact_is_a_soft_delete(admin_a, org_a):
    contact = ContactFactory(organization=org_a, first_name="Soft")
    confirm = admin_a.get(reverse("admin:contacts_contact_delete", args=[contact.pk]))
    assert confirm.status_code == 200
    admin_a.post(reverse("admin:contacts_contact_delete", args=[contact.pk]), {"post": "yes"})
    contact.refresh_from_db()
    assert contact.deleted_at is not None
    assert admin_a.get(CONTACTS).context["cl"].result_count == 0
    assert admin_a.get(change_url(contact)).status_code == 404


def test_bulk_delete_is_a_soft_delete(admin_a, org_a):
    contacts = ContactFactory.create_batch(3, organization=org_a)
    admin_a.post(
        CONTACTS,
        {
            "action": "delete_selected",
            ACTION_CHECKBOX_NAME: [c.pk for c in contacts[:2]],
            "post": "yes",
        },
    )
    assert Contact.objects.count() == 3
    assert list(Contact.objects.live()) == [contacts[2]]


def test_search_finds_a_contact_by_name_email_or_phone_as_typed(admin_a, org_a):
    ContactFactory(organization=org_a, first_name="Zoe", phone="4915123456789", email="z@x.org")
    ContactFactory(organization=org_a, first_name="Other", phone="4915100000000", email="o@x.org")
    for term in ["zoe", "z@x.org", "+49 151 2345", "4915123456789"]:
        response = admin_a.get(CONTACTS, {"q": term})
        assert response.context["cl"].result_count == 1, term


def test_filters_by_group_and_favourite(admin_a, org_a):
    group = ContactGroupFactory(organization=org_a)
    ContactFactory(organization=org_a, contact_group=group, is_favorite=True)
    ContactFactory(organization=org_a)
    assert (
        admin_a.get(CONTACTS, {"contact_group__id__exact": group.pk}).context["cl"].result_count
        == 1
    )
    assert admin_a.get(CONTACTS, {"is_favorite__exact": 1}).context["cl"].result_count == 1


def test_group_list_counts_live_contacts(admin_a, org_a):
    group = ContactGroupFactory(organization=org_a, name="Counted")
    ContactFactory.create_batch(2, organization=org_a, contact_group=group)
    gone = ContactFactory(organization=org_a, contact_group=group)
    admin_a.post(reverse("admin:contacts_contact_delete", args=[gone.pk]), {"post": "yes"})
    response = admin_a.get(GROUPS)
    [row] = response.context["cl"].result_list
    assert row.contact_count == 2


def test_a_duplicate_group_name_is_the_services_form_error(admin_a, org_a):
    ContactGroupFactory(organization=org_a, name="VIP")
    response = admin_a.post(reverse("admin:contacts_contactgroup_add"), {"name": "VIP"})
    assert form_errors(response)["name"] == [DUPLICATE_GROUP]
    assert ContactGroup.objects.count() == 1


def test_deleting_a_group_detaches_its_contacts(admin_a, org_a):
    group = ContactGroupFactory(organization=org_a)
    contact = ContactFactory(organization=org_a, contact_group=group)
    admin_a.post(reverse("admin:contacts_contactgroup_delete", args=[group.pk]), {"post": "yes"})
    group.refresh_from_db()
    contact.refresh_from_db()
    assert group.deleted_at is not None
    assert contact.contact_group is None
    assert contact.deleted_at is None


def test_the_admin_refuses_it(admin_a):
    response = admin_a.post(ADD, contact_form(phone="+12345678"))
    assert response.status_code == 200
    assert form_errors(response)["phone"] == [LOCAL_ONLY_PHONE]
    assert not Contact.objects.exists()
