"""What the fuzzer found, kept as plain regression tests."""

import pytest

from tests.factories import ContactFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/api/contacts", "/api/contact-groups", "/api/chats"])
@pytest.mark.parametrize("ordering", [",", ",,"])
def test_blank_ordering_entries_are_ignored_not_a_500(api, path, ordering):
    response = api.get(path, {"ordering": ordering})
    assert response.status_code == 200, response.content


def test_blank_entries_beside_a_real_one_keep_its_order(api, org_a):
    ContactFactory(organization=org_a, first_name="Bea")
    ContactFactory(organization=org_a, first_name="Ada")
    response = api.get("/api/contacts", {"ordering": ",first_name,"})
    assert [row["first_name"] for row in response.json()["data"]] == ["Ada", "Bea"]
