"""List pages cost a fixed number of queries, however many rows they show (no N+1)."""

import pytest
from django.urls import reverse

from accounts.services import issue_token
from tests.admin.conftest import make_records

pytestmark = pytest.mark.django_db

# Per page for a staff member: session, user, membership (with its organization),
# permissions (user's, groups'), then the page's own queries. See each comment.
PAGES = {
    # count, rows with their groups (one join), the group filter's choices
    "contacts_contact": 8,
    # count, rows with the annotated contact counts
    "contacts_contactgroup": 7,
    # count, rows
    "canned_replies_cannedreply": 7,
    # count, rows with their contacts (one join)
    "sending_chat": 7,
    # count, rows, the distinct values of three filters
    "business_numbers_messagetemplate": 10,
}


def fill(organization, copies: int) -> None:
    for n in range(copies):
        make_records(organization, f"Word{n}")


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("copies", [1, 5])
def test_staff_list_pages_have_a_fixed_query_count(
    admin_a, org_a, org_b, django_assert_num_queries, page, copies
):
    fill(org_a, copies)
    fill(org_b, 2)
    with django_assert_num_queries(PAGES[page], info=page):
        response = admin_a.get(reverse(f"admin:{page}_changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count == copies


@pytest.mark.parametrize("copies", [1, 5])
def test_superuser_contact_list_has_a_fixed_query_count(
    admin_super, org_a, org_b, django_assert_num_queries, copies
):
    fill(org_a, copies)
    fill(org_b, copies)
    # session, user, count, rows with group and organization, group and organization filters
    with django_assert_num_queries(6):
        admin_super.get(reverse("admin:contacts_contact_changelist"))


@pytest.mark.parametrize("copies", [1, 5])
def test_token_list_has_a_fixed_query_count(admin_super, org_a, django_assert_num_queries, copies):
    for _ in range(copies):
        issue_token(organization=org_a)
    # session, user, count, rows with organizations, organization filter
    with django_assert_num_queries(5):
        admin_super.get(reverse("admin:accounts_apitoken_changelist"))
