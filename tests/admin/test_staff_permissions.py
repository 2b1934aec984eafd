"""Staff members hold their organization's apps' permissions when they are checked, so a
staff user created before an app existed manages its records too."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.admin.conftest import logged_in

pytestmark = pytest.mark.django_db

NEWER_APPS = ["admin:events_endpoint_changelist", "admin:campaigns_campaign_changelist"]


@pytest.mark.parametrize("page", NEWER_APPS)
def test_a_staff_member_from_before_an_app_existed_can_open_its_pages(staff_a, page):
    staff_a.user_permissions.clear()  # as a user created before these apps were installed
    staff = get_user_model().objects.get(pk=staff_a.pk)  # no cached permissions
    assert staff.has_perm("events.view_endpoint")
    assert logged_in(staff).get(reverse(page)).status_code == 200


def test_staff_without_a_membership_get_no_permissions(db):
    loner = get_user_model().objects.create_user("loner", password="x", is_staff=True)
    assert not loner.has_perm("contacts.view_contact")
    assert logged_in(loner).get(reverse("admin:contacts_contact_changelist")).status_code == 403


def test_a_user_who_is_not_staff_gets_no_permissions(staff_a):
    staff_a.is_staff = False
    staff_a.save()
    staff_a.user_permissions.clear()
    user = get_user_model().objects.get(pk=staff_a.pk)
    assert not user.has_perm("contacts.view_contact")
