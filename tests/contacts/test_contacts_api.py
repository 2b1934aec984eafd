"""The contacts API: shapes of api.md, rules of two organizations."""

import json
import re

import pytest

from contacts.models import Contact
from tests.factories import ContactFactory, ContactGroupFactory

pytestmark = pytest.mark.django_db

DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


def create(api, **fields):
    payload = {
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": "ada@example.com",
        "phone": "+14155552671",
        **fields,
    }
    return api.post("/api/contacts", payload, format="json")


def test_create_returns_the_write_result(api):
    response = create(api)
    assert response.status_code == 200
    contact = Contact.objects.get()
    assert response.json() == {
        "statusCode": 200,
        "id": str(contact.uuid),
        "message": "Request processed successfully",
    }


def test_contact_shape_is_exactly_api_md(api, org_a):
    create(api, address={"city": "London", "country": "UK"})
    record = api.get("/api/contacts").json()["data"][0]
    assert list(record) == [
        "id",
        "uuid",
        "organization_id",
        "first_name",
        "last_name",
        "phone",
        "email",
        "avatar",
        "address",
        "contact_group_id",
        "is_favorite",
        "opted_out",  # beyond api.md: campaigns skip opted-out contacts
        "user_id",  # beyond api.md: WhatsApp's business-scoped user id, or ""
        "metadata",  # beyond api.md: an import's extra columns, JSON-encoded, or null
        "created_by",
        "created_at",
        "updated_at",
        "deleted_at",
        "full_name",
        "formatted_phone_number",  # as the original product appends it
    ]
    assert record["formatted_phone_number"] == "+1 415-555-2671"
    assert record["organization_id"] == org_a.id
    assert record["phone"] == "14155552671"
    assert record["is_favorite"] == 0
    assert record["created_by"] == 0
    assert DATETIME.match(record["created_at"]) and DATETIME.match(record["updated_at"])
    assert record["deleted_at"] is None
    assert record["full_name"] == "Ada Lovelace"
    assert record["address"] == (
        '{"street":null,"city":"London","state":null,"zip":null,"country":"UK"}'
    )
    assert json.loads(record["address"])["city"] == "London"


def test_detail_is_wrapped_in_data(api):
    uuid = create(api).json()["id"]
    response = api.get(f"/api/contacts/{uuid}")
    assert response.status_code == 200
    assert response.json()["data"]["uuid"] == uuid


def test_full_name_quirks(org_a, api):
    ContactFactory(organization=org_a, first_name=None, last_name=None)
    ContactFactory(organization=org_a, first_name="Solo", last_name=None)
    names = [c["full_name"] for c in api.get("/api/contacts").json()["data"]]
    assert names == [" ", "Solo "]


@pytest.mark.parametrize(
    "raw, stored",
    [
        ("+14155552671", "14155552671"),
        ("14155552671", "14155552671"),
        ("+44 20 7946 0958", "442079460958"),
        ("+49 (151) 1234-5678", "4915112345678"),
    ],
)
def test_phone_is_normalised_to_digits(api, raw, stored):
    assert create(api, phone=raw).status_code == 200
    assert Contact.objects.get().phone == stored


@pytest.mark.parametrize(
    "phone", ["+1", "hello", "+1415555267", "+99912345", "", "+1-800-FLOWERS", 14155552671, None]
)
def test_invalid_phone_is_400_on_phone(api, phone):
    response = create(api, phone=phone)
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["phone"]
    assert not Contact.objects.exists()


def test_duplicate_phone_is_400_and_becomes_free_after_delete(api):
    uuid = create(api).json()["id"]
    response = create(api, phone="+1 415 555 2671")
    assert response.status_code == 400
    assert response.json()["errors"] == {"phone": ["A contact with this phone already exists."]}
    api.delete(f"/api/contacts/{uuid}")
    assert create(api).status_code == 200


def test_same_phone_in_two_organizations(api, api_b):
    assert create(api).status_code == 200
    assert create(api_b).status_code == 200


def test_first_name_and_phone_are_required_on_create(api):
    response = api.post("/api/contacts", {"last_name": "x"}, format="json")
    assert set(response.json()["errors"]) == {"first_name", "phone"}


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"first_name": "x" * 256}, "first_name"),
        ({"last_name": 7}, "last_name"),
        ({"email": "not-an-email"}, "email"),
        ({"email": ["a@b.co"]}, "email"),
        ({"is_favorite": "maybe"}, "is_favorite"),
        ({"is_favorite": 2}, "is_favorite"),
        ({"address": "London"}, "address.non_field_errors"),
        ({"address": {"city": {"nested": "junk"}}}, "address.city"),
        ({"contact_group": "not-a-uuid"}, "contact_group"),
        ({"first_name": "nul\x00byte"}, "first_name"),
    ],
)
def test_bad_input_is_400_and_changes_nothing(api, fields, field):
    response = create(api, **fields)
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert not Contact.objects.exists()


def test_lone_surrogate_is_400(api):
    raw = '{"first_name": "\\ud800", "phone": "+14155552671"}'
    response = api.post("/api/contacts", raw, content_type="application/json")
    assert response.status_code == 400
    assert "first_name" in response.json()["errors"]


def test_group_is_given_by_uuid(api, org_a):
    group = ContactGroupFactory(organization=org_a)
    create(api, contact_group=str(group.uuid), is_favorite=True)
    record = api.get("/api/contacts").json()["data"][0]
    assert record["contact_group_id"] == group.id
    assert record["is_favorite"] == 1


def test_another_organizations_group_is_invalid(api, org_b):
    foreign = ContactGroupFactory(organization=org_b)
    response = create(api, contact_group=str(foreign.uuid))
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "contact_group": ["The selected contact group is invalid."]
    }


def test_edit_changes_only_the_fields_sent(api):
    uuid = create(api, address={"city": "London"}).json()["id"]
    response = api.put(f"/api/contacts/{uuid}", {"last_name": "Byron"}, format="json")
    assert response.json() == {
        "statusCode": 200,
        "id": uuid,
        "message": "Request processed successfully",
    }
    contact = Contact.objects.get()
    assert (contact.first_name, contact.last_name, contact.email) == (
        "Ada",
        "Byron",
        "ada@example.com",
    )
    assert contact.address["city"] == "London"


def test_edit_with_null_clears_and_patch_is_a_synonym(api):
    uuid = create(api).json()["id"]
    api.patch(f"/api/contacts/{uuid}", {"email": None, "address": None}, format="json")
    contact = Contact.objects.get()
    assert contact.email is None and contact.address is None


def test_edit_to_a_taken_phone_is_400(api):
    create(api)
    uuid = create(api, phone="+14155550000").json()["id"]
    response = api.put(f"/api/contacts/{uuid}", {"phone": "+14155552671"}, format="json")
    assert response.status_code == 400
    assert Contact.objects.get(uuid=uuid).phone == "14155550000"


def test_edit_with_bad_input_changes_nothing(api):
    uuid = create(api).json()["id"]
    response = api.put(f"/api/contacts/{uuid}", {"last_name": "Ok", "email": "bad"}, format="json")
    assert response.status_code == 400
    assert Contact.objects.get().last_name == "Lovelace"


def test_delete_is_soft_and_twice_is_404(api):
    uuid = create(api).json()["id"]
    assert api.delete(f"/api/contacts/{uuid}").json()["id"] == uuid
    assert Contact.objects.get().deleted_at is not None
    assert api.get(f"/api/contacts/{uuid}").status_code == 404
    assert api.get("/api/contacts").json()["meta"]["total"] == 0
    assert api.delete(f"/api/contacts/{uuid}").status_code == 404
    assert api.put(f"/api/contacts/{uuid}", {"first_name": "x"}, format="json").status_code == 404


def test_other_organizations_contact_is_not_found_and_unchanged(api, org_b):
    foreign = ContactFactory(organization=org_b, first_name="Theirs")
    path = f"/api/contacts/{foreign.uuid}"
    assert api.get(path).status_code == 404
    assert api.put(path, {"first_name": "Mine"}, format="json").status_code == 404
    assert api.delete(path).status_code == 404
    foreign.refresh_from_db()
    assert foreign.first_name == "Theirs" and foreign.deleted_at is None
    assert api.get("/api/contacts").json()["data"] == []


def test_filters(api, org_a):
    group = ContactGroupFactory(organization=org_a)
    ada = ContactFactory(
        organization=org_a,
        first_name="Ada",
        last_name="Lovelace",
        phone="14155552671",
        contact_group=group,
        is_favorite=True,
    )
    ContactFactory(
        organization=org_a, first_name="Grace", last_name="Hopper", email="grace@navy.mil"
    )

    def ids(query):
        response = api.get(f"/api/contacts?{query}")
        assert response.status_code == 200, response.content
        return [c["id"] for c in response.json()["data"]]

    assert ids("search=ada+love") == [ada.id]
    assert ids("search=%2B1415") == [ada.id]
    assert ids("search=navy") != [ada.id]
    assert ids(f"contact_group={group.uuid}") == [ada.id]
    assert ids("is_favorite=1") == [ada.id]
    assert len(ids("is_favorite=0")) == 1
    assert ids("ordering=-first_name")[0] != ada.id


@pytest.mark.parametrize(
    "query", ["is_favorite=2", "contact_group=nope", "ordering=password", "search=" + "x" * 300]
)
def test_bad_filters_are_400(api, query):
    response = api.get(f"/api/contacts?{query}")
    assert response.status_code == 400
    assert response.json()["message"] == "The given data was invalid."


def test_list_query_count_is_pinned(api, org_a, django_assert_num_queries):
    ContactFactory.create_batch(
        15, organization=org_a, contact_group=ContactGroupFactory(organization=org_a)
    )
    with django_assert_num_queries(2):  # token; the page and its total in one statement
        response = api.get("/api/contacts")
    assert len(response.json()["data"]) == 10
    with django_assert_num_queries(3):  # past the end: token, the empty page, the total
        response = api.get("/api/contacts?page=5")
    assert response.json()["data"] == [] and response.json()["meta"]["total"] == 15
    with django_assert_num_queries(3):  # filtered: token, page, count
        response = api.get("/api/contacts?is_favorite=0&per_page=5")
    assert response.json()["meta"]["total"] == 15


@pytest.mark.parametrize("query", ["ordering=id", "search=&is_favorite=&ordering="])
def test_a_list_by_id_without_a_filter_costs_what_the_plain_list_costs(
    api, org_a, query, django_assert_num_queries
):
    contacts = ContactFactory.create_batch(15, organization=org_a)
    ContactFactory(organization=org_a, deleted_at="2024-01-01T00:00:00Z")
    with django_assert_num_queries(2):  # token; the page and its total in one statement
        body = api.get(f"/api/contacts?{query}&page=2&per_page=5").json()
    assert [row["id"] for row in body["data"]] == [c.pk for c in contacts[5:10]]
    assert body["meta"]["total"] == 15


def test_create_query_count_is_pinned(api, django_assert_num_queries):
    # token, duplicate check, savepoint + insert + the endpoints that want the event + release
    with django_assert_num_queries(6):
        create(api)
