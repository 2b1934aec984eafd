"""`is_favorite` takes 0/1 and true/false, as JSON or as the exact strings clients send;
any other spelling is a 400 on `is_favorite` that changes nothing."""

import pytest

from contacts.models import Contact
from tests.factories import ContactFactory

pytestmark = pytest.mark.django_db


def create(api, is_favorite):
    body = {"first_name": "Ada", "phone": "+14155552671", "is_favorite": is_favorite}
    return api.post("/api/contacts", body, format="json")


@pytest.mark.parametrize(
    "value, stored",
    [(1, True), (0, False), (True, True), (False, False)]
    + [("1", True), ("0", False), ("true", True), ("false", False)],
)
def test_the_documented_spellings_are_taken(api, value, stored):
    response = create(api, value)
    assert response.status_code == 200, response.content
    assert Contact.objects.get().is_favorite is stored


OTHER_SPELLINGS = ["True", "FALSE", "FaLsE", "TRUE", "yes", "on", "t", " 1", "01", 1.0, 2, [1]]


@pytest.mark.parametrize("value", OTHER_SPELLINGS)
def test_other_spellings_are_a_400_on_is_favorite(api, value):
    response = create(api, value)
    assert response.status_code == 400
    assert response.json()["message"] == "The given data was invalid."
    assert list(response.json()["errors"]) == ["is_favorite"]
    assert not Contact.objects.exists()


@pytest.mark.parametrize("value", OTHER_SPELLINGS)
def test_an_edit_with_another_spelling_changes_nothing(api, org_a, value):
    contact = ContactFactory(organization=org_a, is_favorite=False)
    response = api.put(f"/api/contacts/{contact.uuid}", {"is_favorite": value}, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["is_favorite"]
    contact.refresh_from_db()
    assert contact.is_favorite is False
