"""The answers the API base builds have exactly the fields their OpenAPI description
documents (messaging_project/api/schema.py): the write result and /api/me."""

import pytest

from messaging_project.api.schema import WhoAmIDetail, WhoAmISerializer, WriteResultSerializer
from messaging_project.api.viewsets import write_result
from tests.factories import ContactFactory
from tests.shapes import assert_documented

pytestmark = pytest.mark.django_db


def test_a_write_result_has_exactly_the_documented_fields(org_a):
    contact = ContactFactory(organization=org_a)

    assert set(write_result(contact).data) == set(WriteResultSerializer().fields)


def test_a_create_answers_exactly_the_documented_write_result(api):
    response = api.post("/api/contact-groups", {"name": "Customers"}, format="json")

    assert response.status_code == 200, response.json()
    assert_documented(response.json(), WriteResultSerializer())


def test_who_am_i_has_exactly_the_documented_fields(api):
    body = api.get("/api/me").json()

    assert set(body["data"]) == set(WhoAmISerializer().fields)
    assert_documented(body, WhoAmIDetail())
