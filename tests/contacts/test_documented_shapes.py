"""Contacts and groups have exactly the fields their OpenAPI description documents
(contacts/api/schema.py), so a field added to the data function or to the description
alone fails here."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from contacts.api.schema import (
    ContactDetail,
    ContactGroupDetail,
    ContactGroupPage,
    ContactGroupRecordSerializer,
    ContactImportDetail,
    ContactImportStartedSerializer,
    ContactPage,
    ContactRecordSerializer,
)
from contacts.representations import contact_data, contact_group_data
from tests.background import run_tasks
from tests.factories import ContactFactory, ContactGroupFactory
from tests.shapes import assert_documented

pytestmark = pytest.mark.django_db


@pytest.fixture
def contact(org_a):
    group = ContactGroupFactory(organization=org_a)
    return ContactFactory(organization=org_a, contact_group=group, address={"city": "Berlin"})


def test_a_contacts_data_has_exactly_the_documented_fields(contact):
    assert set(contact_data(contact)) == set(ContactRecordSerializer().fields)


def test_a_groups_data_has_exactly_the_documented_fields(org_a):
    group = ContactGroupFactory(organization=org_a)

    assert set(contact_group_data(group)) == set(ContactGroupRecordSerializer().fields)


@pytest.mark.parametrize("query", ["", "?is_favorite=0"], ids=["plain list", "filtered list"])
def test_the_contact_list_is_exactly_the_documented_page(api, contact, query):
    response = api.get(f"/api/contacts{query}")

    assert response.json()["meta"]["total"] == 1
    assert_documented(response.json(), ContactPage())


def test_one_contact_is_exactly_the_documented_detail(api, contact):
    assert_documented(api.get(f"/api/contacts/{contact.uuid}").json(), ContactDetail())


def test_the_group_list_and_one_group_are_exactly_as_documented(api, org_a):
    group = ContactGroupFactory(organization=org_a)

    assert_documented(api.get("/api/contact-groups").json(), ContactGroupPage())
    assert_documented(api.get(f"/api/contact-groups/{group.uuid}").json(), ContactGroupDetail())


def test_an_import_is_exactly_the_documented_detail(api, org_a):
    upload = SimpleUploadedFile("c.csv", b"phone\n+14155552671\nnope\n")
    started = api.post("/api/contacts/import", {"file": upload}, format="multipart").json()
    assert_documented(started, ContactImportStartedSerializer())
    run_tasks()
    detail = api.get(f"/api/contacts/imports/{started['data']['uuid']}").json()
    assert detail["data"]["failed"] == 1
    assert_documented(detail, ContactImportDetail())
