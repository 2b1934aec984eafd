"""Clients written for the original product keep working: the contact fields its send
endpoints take, header and footer sent without buttons, the contact's formatted number,
`preview_url`, and the template list's `metadata` (docs/api.md, "Clients of the original product")."""

import json

import pytest
from django.core.management import call_command

from contacts.models import Contact
from sending.models import Chat
from tests.factories import ContactFactory

pytestmark = pytest.mark.django_db

TEMPLATE = {"name": "hello_world", "language": {"code": "en_US"}}


def test_a_send_creates_the_contact_with_the_names_and_email_given(api, org_a):
    response = api.post(
        "/api/send",
        {
            "phone": "+5215512345678",
            "message": "Hola",
            "first_name": "Lupita",
            "last_name": "Nyong'o",
            "email": "lupita@example.com",
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    contact = Contact.objects.get()
    assert (contact.phone, contact.first_name, contact.last_name, contact.email) == (
        "525512345678",
        "Lupita",
        "Nyong'o",
        "lupita@example.com",
    )
    assert response.json()["data"]["data"]["chat"]["contact"]["full_name"] == "Lupita Nyong'o"


def test_a_template_send_creates_the_contact_with_the_names_given(api, org_a):
    response = api.post(
        "/api/send/template",
        {"phone": "+14155552671", "template": TEMPLATE, "first_name": "Ada", "email": ""},
        format="json",
    )
    assert response.status_code == 200, response.json()
    contact = Contact.objects.get()
    assert (contact.first_name, contact.last_name, contact.email) == ("Ada", None, None)


def test_a_known_contact_keeps_its_names(api, org_a):
    known = ContactFactory(organization=org_a, phone="14155552671", first_name="Grace")
    api.post(
        "/api/send",
        {"phone": "+14155552671", "message": "hi", "first_name": "Someone", "last_name": "Else"},
        format="json",
    )
    known.refresh_from_db()
    assert known.first_name == "Grace" and Contact.objects.count() == 1


@pytest.mark.parametrize(
    ("field", "value"), [("email", "not-an-email"), ("first_name", "x" * 256), ("last_name", 5)]
)
def test_bad_contact_fields_are_a_400_naming_them_and_send_nothing(api, org_a, field, value):
    response = api.post(
        "/api/send", {"phone": "+14155552671", "message": "hi", field: value}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    assert not Chat.objects.exists() and not Contact.objects.exists()


def test_header_and_footer_without_buttons_are_ignored(api, cloud_org, graph):
    response = api.post(
        "/api/send",
        {"phone": "+14155552671", "message": "Hello", "header": "Hi", "footer": "Bye"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    [request] = graph.requests
    assert request.json["type"] == "text"
    assert request.json["text"] == {"preview_url": True, "body": "Hello"}
    assert Chat.objects.get().metadata == {"type": "text", "text": {"body": "Hello"}}


def test_every_contact_object_has_its_formatted_number(api, org_a):
    ContactFactory(organization=org_a, phone="5511987654321")
    ContactFactory(organization=org_a, phone="", user_id="BR.1502576394655843")
    rows = api.get("/api/contacts").json()["data"]
    assert [row["formatted_phone_number"] for row in rows] == ["+55 11 98765-4321", ""]
    # A user whose number WhatsApp withholds is told apart by the user id.
    assert [(row["phone"], row["user_id"]) for row in rows] == [
        ("5511987654321", ""),
        ("", "BR.1502576394655843"),
    ]
    one = api.get(f"/api/contacts/{rows[0]['uuid']}").json()["data"]
    assert one["formatted_phone_number"] == "+55 11 98765-4321"


def test_the_template_list_carries_the_channels_description_and_updated_at(api, org_a):
    call_command("sync_templates", str(org_a.uuid))
    [row] = api.get("/api/templates").json()["data"]
    metadata = json.loads(row["metadata"])
    assert metadata["name"] == "hello_world"
    assert metadata["language"] == "en_US"
    assert metadata["status"] == "APPROVED"
    assert metadata["category"] == "UTILITY"
    assert metadata["id"] == "1000000000000001"
    assert [c["type"] for c in metadata["components"]] == ["HEADER", "BODY", "FOOTER"]
    assert row["updated_at"] is not None
