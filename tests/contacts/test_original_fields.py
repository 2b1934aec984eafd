"""POST and PUT /api/contacts take the original product's fields
(app/Services/ContactService.php, ContactService::store): `group` (a group's uuid), the
address flat (`street`, `city`, `state`, `zip`, `country`) and `metadata` (an object, or
its JSON text as a form sends it). A field that is given is never dropped: a bad one is a
400 naming it, and changes nothing."""

import json
from urllib.parse import urlencode

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from contacts.models import Contact
from tests.factories import ContactFactory, ContactGroupFactory

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"


def names(field: str, errors: dict) -> bool:
    """Whether the errors name `field` (or a place inside it, by its dotted path)."""
    return any(key == field or key.startswith(f"{field}.") for key in errors)


def record(api, uuid) -> dict:
    return api.get(f"/api/contacts/{uuid}").json()["data"]


def test_a_create_with_the_originals_fields(api, org_a):
    group = ContactGroupFactory(organization=org_a, name="VIP")
    body = {
        "first_name": "Ada",
        "phone": "+14155552671",
        "group": str(group.uuid),
        "street": "1 Main St",
        "city": "Springfield",
        "state": "IL",
        "zip": "62701",
        "country": "US",
        "metadata": {"Gender": "F", "Plan": "gold"},
    }
    response = api.post("/api/contacts", body, format="json")
    assert response.status_code == 200, response.json()
    data = record(api, response.json()["id"])
    assert data["contact_group_id"] == group.pk
    assert json.loads(data["address"]) == {
        "street": "1 Main St",
        "city": "Springfield",
        "state": "IL",
        "zip": "62701",
        "country": "US",
    }
    assert json.loads(data["metadata"]) == {"Gender": "F", "Plan": "gold"}


def test_a_form_create_as_a_php_client_sends_it(api, org_a):
    group = ContactGroupFactory(organization=org_a)
    body = urlencode(
        {
            "first_name": "Ada",
            "phone": "+14155552671",
            "group": str(group.uuid),
            "city": "Lisbon",
            "metadata": json.dumps({"Gender": "F"}),
        }
    )
    response = api.post("/api/contacts", body, content_type=FORM)
    assert response.status_code == 200, response.json()
    contact = Contact.objects.get()
    assert contact.contact_group == group
    assert contact.address["city"] == "Lisbon" and contact.address["street"] is None
    assert contact.metadata == {"Gender": "F"}


def test_bracketed_metadata_of_a_form(api, org_a):
    body = urlencode({"first_name": "Ada", "phone": "+14155552671", "metadata[Plan]": "gold"})
    assert api.post("/api/contacts", body, content_type=FORM).status_code == 200
    assert Contact.objects.get().metadata == {"Plan": "gold"}


def test_an_edit_changes_only_the_address_parts_it_gives(api, org_a):
    contact = ContactFactory(
        organization=org_a,
        address={"street": "1 Main St", "city": "Springfield", "state": "IL", "zip": "62701",
                 "country": "US"},
        metadata={"Plan": "gold"},
    )  # fmt: skip
    group = ContactGroupFactory(organization=org_a)
    response = api.put(
        f"/api/contacts/{contact.uuid}",
        {"city": "Shelbyville", "zip": "", "group": str(group.uuid), "metadata": '{"Plan":"tin"}'},
        format="json",
    )
    assert response.status_code == 200, response.json()
    contact.refresh_from_db()
    assert contact.address == {
        "street": "1 Main St",
        "city": "Shelbyville",
        "state": "IL",
        "zip": None,
        "country": "US",
    }
    assert contact.contact_group == group
    assert contact.metadata == {"Plan": "tin"}


def test_an_edit_clears_the_group_and_the_metadata_given_as_null(api, org_a):
    group = ContactGroupFactory(organization=org_a)
    contact = ContactFactory(organization=org_a, contact_group=group, metadata={"a": 1})
    response = api.put(
        f"/api/contacts/{contact.uuid}", {"group": None, "metadata": None}, format="json"
    )
    assert response.status_code == 200
    contact.refresh_from_db()
    assert (contact.contact_group, contact.metadata) == (None, None)


def test_flat_parts_go_over_the_address_object(api, org_a):
    body = {
        "first_name": "Ada",
        "phone": "+14155552671",
        "address": {"city": "Porto", "country": "Portugal"},
        "city": "Lisbon",
    }
    assert api.post("/api/contacts", body, format="json").status_code == 200
    address = Contact.objects.get().address
    assert (address["city"], address["country"]) == ("Lisbon", "Portugal")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("group", "not-a-uuid"),
        ("group", "3d6caad8-cd7b-447f-bec7-08d6ef21a166"),  # no such group
        ("city", "x" * 256),
        ("zip", 12345),
        ("street", ["a"]),
        ("metadata", "not json"),
        ("metadata", "[1, 2]"),
        ("metadata", [1, 2]),
        ("metadata", 7),
        ("metadata", {"deep": [[[[[[[[[[1]]]]]]]]]]}),
        ("metadata", {"nul": "a\u0000b"}),
    ],
)
def test_a_bad_field_is_a_400_naming_it(api, org_a, field, value):
    body = {"first_name": "Ada", "phone": "+14155552671", field: value}
    response = api.post("/api/contacts", body, format="json")
    assert response.status_code == 400, response.json()
    assert names(field, response.json()["errors"])
    assert not Contact.objects.exists()
    contact = ContactFactory(organization=org_a, first_name="Bo")
    edit = api.put(f"/api/contacts/{contact.uuid}", {field: value}, format="json")
    assert edit.status_code == 400 and names(field, edit.json()["errors"])
    contact.refresh_from_db()
    assert contact.first_name == "Bo"


def test_another_organizations_group_is_refused(api, org_b):
    group = ContactGroupFactory(organization=org_b)
    body = {"first_name": "Ada", "phone": "+14155552671", "group": str(group.uuid)}
    response = api.post("/api/contacts", body, format="json")
    assert response.status_code == 400 and "group" in response.json()["errors"]


def test_group_and_contact_group_naming_two_groups_is_refused(api, org_a):
    one, two = ContactGroupFactory.create_batch(2, organization=org_a)
    body = {
        "first_name": "Ada",
        "phone": "+14155552671",
        "group": str(one.uuid),
        "contact_group": str(two.uuid),
    }
    response = api.post("/api/contacts", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["group"] == [
        "Give the group once: `group` and `contact_group` name different groups."
    ]
    body["contact_group"] = str(one.uuid)
    assert api.post("/api/contacts", body, format="json").status_code == 200


# The original's avatar upload: `file` in ContactService::store (hasFile('file')).
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
AVATAR_REFUSED = (
    "Contact avatars are not stored: send the contact without `file` (its avatar image)."
)


def test_an_avatar_upload_is_a_400_naming_file(api, org_a):
    avatar = SimpleUploadedFile("ada.png", PNG, content_type="image/png")
    body = {"first_name": "Ada", "phone": "+14155552671", "file": avatar}
    response = api.post("/api/contacts", body, format="multipart")
    assert response.status_code == 400, response.json()
    assert response.json()["errors"] == {"file": [AVATAR_REFUSED]}
    assert not Contact.objects.exists()
    # An edit as a PHP client sends it (`_method=PUT`) changes nothing either.
    contact = ContactFactory(organization=org_a, first_name="Bo")
    avatar.seek(0)
    edit = api.post(
        f"/api/contacts/{contact.uuid}",
        {"_method": "PUT", "first_name": "Al", "file": avatar},
        format="multipart",
    )
    assert edit.status_code == 400 and edit.json()["errors"] == {"file": [AVATAR_REFUSED]}
    contact.refresh_from_db()
    assert contact.first_name == "Bo" and contact.avatar is None


@pytest.mark.parametrize("value", ["", None])
def test_file_given_empty_is_nothing_given(api, org_a, value):
    body = {"first_name": "Ada", "phone": "+14155552671", "file": value}
    response = api.post("/api/contacts", body, format="json")
    assert response.status_code == 200, response.json()
    assert Contact.objects.get().avatar is None
    form = urlencode({"first_name": "Bo", "phone": "+14155552672", "file": ""})
    assert api.post("/api/contacts", form, content_type=FORM).status_code == 200
