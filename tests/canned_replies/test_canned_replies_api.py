"""The canned replies API: request fields in, metadata out."""

import json

import pytest

from canned_replies.models import CannedReply
from tests.factories import CannedReplyFactory

pytestmark = pytest.mark.django_db

PAYLOAD = {
    "name": "Greeting",
    "trigger": "hello",
    "match_criteria": "contains",
    "response_type": "text",
    "response": "Hi! How can we help?",
}


def test_create_and_stored_shape(api, org_a):
    response = api.post("/api/canned-replies", PAYLOAD, format="json")
    reply = CannedReply.objects.get()
    assert response.json() == {
        "statusCode": 200,
        "id": str(reply.uuid),
        "message": "Request processed successfully",
    }
    record = api.get("/api/canned-replies").json()["data"][0]
    assert list(record) == [
        "id",
        "uuid",
        "organization_id",
        "name",
        "trigger",
        "match_criteria",
        "metadata",
        "created_by",
        "deleted_by",
        "deleted_at",
        "created_at",
        "updated_at",
    ]
    assert record["metadata"] == '{"type":"text","data":{"text":"Hi! How can we help?"}}'
    assert json.loads(record["metadata"])["data"]["text"] == "Hi! How can we help?"
    assert record["match_criteria"] == "contains" and record["organization_id"] == org_a.id
    assert record["deleted_by"] is None and record["created_by"] == 0


@pytest.mark.parametrize(
    "spelling, stored",
    [
        ("exact match", "exact match"),
        ("exact_match", "exact match"),
        ("starts_with", "starts with"),
        ("ends with", "ends with"),
        ("Contains", "contains"),
    ],
)
def test_match_criteria_spellings(api, spelling, stored):
    api.post("/api/canned-replies", {**PAYLOAD, "match_criteria": spelling}, format="json")
    assert CannedReply.objects.get().match_criteria == stored


@pytest.mark.parametrize(
    "change, field",
    [
        ({"match_criteria": "regex"}, "match_criteria"),
        ({"match_criteria": 1}, "match_criteria"),
        (
            {"response_type": "sticker"},
            "response_type",
        ),  # media replies: image|audio|document|video
        ({"response_type": "image"}, "response"),  # whose response must be a URL
        ({"response": "x" * 4097}, "response"),
        ({"trigger": ""}, "trigger"),
        ({"name": ["list"]}, "name"),
        ({"trigger": None}, "trigger"),
    ],
)
def test_bad_input_is_400_and_creates_nothing(api, change, field):
    response = api.post("/api/canned-replies", {**PAYLOAD, **change}, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    assert not CannedReply.objects.exists()


def test_every_field_is_required_on_create(api):
    response = api.post("/api/canned-replies", {}, format="json")
    assert set(response.json()["errors"]) == set(PAYLOAD)


def test_partial_edit_keeps_the_rest(api):
    uuid = api.post("/api/canned-replies", PAYLOAD, format="json").json()["id"]
    api.put(f"/api/canned-replies/{uuid}", {"response": "Hello again"}, format="json")
    reply = CannedReply.objects.get()
    assert reply.metadata == {"type": "text", "data": {"text": "Hello again"}}
    assert (reply.name, reply.trigger, reply.match_criteria) == ("Greeting", "hello", "contains")
    api.put(f"/api/canned-replies/{uuid}", {"match_criteria": "exact_match"}, format="json")
    reply.refresh_from_db()
    assert reply.match_criteria == "exact match" and reply.response_text == "Hello again"


def test_delete_sets_deleted_at_and_deleted_by(api):
    uuid = api.post("/api/canned-replies", PAYLOAD, format="json").json()["id"]
    assert api.delete(f"/api/canned-replies/{uuid}").status_code == 200
    reply = CannedReply.objects.get()
    assert reply.deleted_at is not None and reply.deleted_by == 0
    assert api.get("/api/canned-replies").json()["data"] == []
    assert api.delete(f"/api/canned-replies/{uuid}").status_code == 404


def test_other_organizations_reply_is_not_found(api, org_b):
    foreign = CannedReplyFactory(organization=org_b, name="Theirs")
    path = f"/api/canned-replies/{foreign.uuid}"
    assert api.get(path).status_code == 404
    assert api.put(path, {"name": "Mine"}, format="json").status_code == 404
    assert api.delete(path).status_code == 404
    foreign.refresh_from_db()
    assert foreign.name == "Theirs" and foreign.deleted_at is None


def test_search_covers_name_trigger_and_response(api, org_a):
    CannedReplyFactory(
        organization=org_a,
        name="Prices",
        trigger="cost",
        metadata={"type": "text", "data": {"text": "See our catalogue"}},
    )
    CannedReplyFactory(organization=org_a, name="Hours", trigger="open")
    for term in ("prices", "COST", "catalogue"):
        assert [
            r["name"] for r in api.get(f"/api/canned-replies?search={term}").json()["data"]
        ] == ["Prices"]


def test_list_query_count_is_pinned(api, org_a, django_assert_num_queries):
    CannedReplyFactory.create_batch(12, organization=org_a)
    with django_assert_num_queries(3):  # token, page, count
        api.get("/api/canned-replies")
