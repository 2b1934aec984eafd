"""The contact groups API."""

import re

import pytest

from contacts.models import Contact, ContactGroup
from tests.factories import ContactFactory, ContactGroupFactory

pytestmark = pytest.mark.django_db

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def test_create_list_and_shape(api, org_a):
    response = api.post("/api/contact-groups", {"name": "VIP"}, format="json")
    group = ContactGroup.objects.get()
    assert response.json() == {
        "statusCode": 200,
        "id": str(group.uuid),
        "message": "Request processed successfully",
    }
    record = api.get("/api/contact-groups").json()["data"][0]
    assert list(record) == [
        "id",
        "uuid",
        "organization_id",
        "name",
        "created_by",
        "created_at",
        "updated_at",
        "deleted_at",
    ]
    assert record["organization_id"] == org_a.id and record["name"] == "VIP"
    assert ISO.match(record["created_at"]) and ISO.match(record["updated_at"])
    assert record["deleted_at"] is None and record["created_by"] == 0


@pytest.mark.parametrize(
    "payload",
    [{}, {"name": ""}, {"name": "x" * 256}, {"name": 5}, {"name": None}, {"name": {"a": 1}}],
)
def test_bad_names_are_400(api, payload):
    response = api.post("/api/contact-groups", payload, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["name"]
    assert not ContactGroup.objects.exists()


def test_name_is_unique_among_live_groups(api, api_b):
    uuid = api.post("/api/contact-groups", {"name": "VIP"}, format="json").json()["id"]
    duplicate = api.post("/api/contact-groups", {"name": "VIP"}, format="json")
    assert duplicate.status_code == 400
    assert duplicate.json()["errors"] == {
        "name": ["A contact group with this name already exists."]
    }
    assert api_b.post("/api/contact-groups", {"name": "VIP"}, format="json").status_code == 200
    api.delete(f"/api/contact-groups/{uuid}")
    assert api.post("/api/contact-groups", {"name": "VIP"}, format="json").status_code == 200


def test_rename(api, org_a):
    group = ContactGroupFactory(organization=org_a, name="Old")
    response = api.put(f"/api/contact-groups/{group.uuid}", {"name": "New"}, format="json")
    assert response.status_code == 200
    group.refresh_from_db()
    assert group.name == "New"


def test_empty_edit_changes_nothing(api, org_a):
    group = ContactGroupFactory(organization=org_a, name="Same")
    assert api.put(f"/api/contact-groups/{group.uuid}", {}, format="json").status_code == 200
    group.refresh_from_db()
    assert group.name == "Same"


def test_delete_detaches_contacts_and_keeps_them(api, org_a):
    group = ContactGroupFactory(organization=org_a)
    contact = ContactFactory(organization=org_a, contact_group=group)
    assert api.delete(f"/api/contact-groups/{group.uuid}").status_code == 200
    contact.refresh_from_db()
    group.refresh_from_db()
    assert contact.contact_group is None and contact.deleted_at is None
    assert group.deleted_at is not None
    assert api.get(f"/api/contact-groups/{group.uuid}").status_code == 404
    assert api.delete(f"/api/contact-groups/{group.uuid}").status_code == 404
    assert Contact.objects.live().count() == 1


def test_other_organizations_group_is_not_found(api, org_b):
    foreign = ContactGroupFactory(organization=org_b, name="Theirs")
    path = f"/api/contact-groups/{foreign.uuid}"
    assert api.get(path).status_code == 404
    assert api.put(path, {"name": "Mine"}, format="json").status_code == 404
    assert api.delete(path).status_code == 404
    foreign.refresh_from_db()
    assert foreign.name == "Theirs" and foreign.deleted_at is None


def test_search_and_ordering(api, org_a):
    ContactGroupFactory(organization=org_a, name="Beta")
    ContactGroupFactory(organization=org_a, name="Alpha")
    assert [g["name"] for g in api.get("/api/contact-groups?ordering=name").json()["data"]] == [
        "Alpha",
        "Beta",
    ]
    assert [g["name"] for g in api.get("/api/contact-groups?search=alp").json()["data"]] == [
        "Alpha"
    ]


def test_list_query_count_is_pinned(api, org_a, django_assert_num_queries):
    ContactGroupFactory.create_batch(12, organization=org_a)
    with django_assert_num_queries(3):  # token, page, count
        api.get("/api/contact-groups")
