"""The admin saves through the services, so an admin edit of a record deleted meanwhile
does not bring it back either: the staff member is told, on the list page, that the
record was deleted and nothing was saved. The interleaving needs concurrent
transactions (PostgreSQL); the same rule read from a stale record is tested everywhere
in tests/contacts/test_edit_delete_races.py."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from canned_replies import services as reply_services
from contacts import services
from contacts.models import Contact, ContactGroup
from tests.admin.conftest import logged_in
from tests.contacts.test_contact_counter import counted, live, on_postgresql
from tests.contacts.test_edit_delete_races import behind_an_uncommitted_delete

pytestmark = [on_postgresql, pytest.mark.django_db(transaction=True)]


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_an_admin_edit_of_a_contact_deleted_meanwhile_says_so_and_keeps_it_deleted(staff_a, org_a):
    contact = services.create_contact(organization=org_a, phone="4915123456789", first_name="Ada")
    url = reverse("admin:contacts_contact_change", args=[contact.pk])
    form = {"first_name": "Grace", "phone": "+4915123456789"}
    response = behind_an_uncommitted_delete(
        lambda: services.delete_contact(contact=contact),
        lambda: logged_in(staff_a).post(url, form, follow=True),
    )
    assert response.status_code == 200
    assert response.redirect_chain == [(reverse("admin:contacts_contact_changelist"), 302)]
    assert messages_of(response) == [
        f"The contact with ID “{contact.pk}” was deleted meanwhile; your changes were not saved."
    ]
    contact.refresh_from_db()
    assert contact.deleted_at is not None and contact.first_name == "Ada"
    assert live(org_a) == 0 == counted(org_a)


def test_an_admin_edit_of_a_reply_deleted_meanwhile_says_so_and_keeps_it_deleted(staff_a, org_a):
    reply = reply_services.create_canned_reply(
        organization=org_a, name="Hours", trigger="hours", match_criteria="contains", response="9"
    )
    url = reverse("admin:canned_replies_cannedreply_change", args=[reply.pk])
    form = {
        "name": "Hours",
        "trigger": "hours",
        "match_criteria": "contains",
        "response_type": "text",
        "response": "8 to 6",
    }
    response = behind_an_uncommitted_delete(
        lambda: reply_services.delete_canned_reply(reply=reply),
        lambda: logged_in(staff_a).post(url, form, follow=True),
    )
    assert response.redirect_chain == [
        (reverse("admin:canned_replies_cannedreply_changelist"), 302)
    ]
    assert messages_of(response) == [
        f"The canned reply with ID “{reply.pk}” was deleted meanwhile; your changes were not saved."
    ]
    reply.refresh_from_db()
    assert reply.deleted_at is not None and reply.response_text == "9"


def test_an_admin_delete_of_a_group_deleted_meanwhile_says_it_already_was(staff_a, org_a):
    group = services.create_contact_group(organization=org_a, name="Clients")
    url = reverse("admin:contacts_contactgroup_delete", args=[group.pk])
    response = behind_an_uncommitted_delete(
        lambda: services.delete_contact_group(group=group),
        lambda: logged_in(staff_a).post(url, {"post": "yes"}, follow=True),
    )
    assert response.redirect_chain == [(reverse("admin:contacts_contactgroup_changelist"), 302)]
    assert messages_of(response) == ["The contact group “Clients” had already been deleted."]
    assert ContactGroup.objects.get(pk=group.pk).deleted_at is not None


def test_an_admin_bulk_delete_skips_a_contact_deleted_meanwhile_and_deletes_the_rest(
    staff_a, org_a
):
    contacts = [
        services.create_contact(organization=org_a, phone=f"491512345678{n}", first_name="A")
        for n in range(3)
    ]
    form = {
        "action": "delete_selected",
        ACTION_CHECKBOX_NAME: [contact.pk for contact in contacts[:2]],
        "post": "yes",
    }
    response = behind_an_uncommitted_delete(
        lambda: services.delete_contact(contact=contacts[0]),
        lambda: logged_in(staff_a).post(reverse("admin:contacts_contact_changelist"), form),
    )
    assert response.status_code == 302
    assert list(Contact.objects.live()) == [contacts[2]]
    assert live(org_a) == 1 == counted(org_a)
