"""GET /api/chats and /api/chats/{uuid}: the organization's chats with their contacts."""

import pytest
from django.utils import timezone

from tests.factories import ContactFactory
from tests.sending.factories import ChatFactory


def test_list_has_the_page_shape_and_the_chat_record(api, org_a):
    chat = ChatFactory(organization=org_a)

    body = api.get("/api/chats").json()

    assert body["meta"]["total"] == 1
    assert body["meta"]["per_page"] == 10
    [record] = body["data"]
    assert record["uuid"] == str(chat.uuid)
    assert record["wam_id"] == chat.wam_id
    assert record["metadata"] == '{"type":"text","text":{"body":"Hello"}}'
    assert record["contact"]["id"] == chat.contact_id
    assert record["media"] is None
    assert record["error"] is None


def test_another_organizations_chats_are_invisible(api, org_a, org_b):
    theirs = ChatFactory(organization=org_b)

    assert api.get("/api/chats").json()["data"] == []
    response = api.get(f"/api/chats/{theirs.uuid}")
    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "message": "Not found."}


def test_detail_returns_the_record(api, org_a):
    chat = ChatFactory(organization=org_a)

    response = api.get(f"/api/chats/{chat.uuid}")

    assert response.status_code == 200
    assert response.json()["data"]["id"] == chat.id
    assert response.json()["data"]["contact"]["uuid"] == str(chat.contact.uuid)


@pytest.mark.parametrize("reference", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_unknown_or_malformed_uuid_is_not_found(api, org_a, reference):
    assert api.get(f"/api/chats/{reference}").status_code == 404


def test_deleted_chats_are_left_out(api, org_a):
    chat = ChatFactory(organization=org_a, deleted_at=timezone.now())

    assert api.get("/api/chats").json()["meta"]["total"] == 0
    assert api.get(f"/api/chats/{chat.uuid}").status_code == 404


def test_filters_by_contact_status_and_type(api, org_a):
    ada = ContactFactory(organization=org_a)
    first = ChatFactory(organization=org_a, contact=ada)
    failed = ChatFactory(organization=org_a, contact=ada, status="failed", wam_id=None)
    inbound = ChatFactory(organization=org_a, type="inbound", status="received")

    def ids(query: str) -> list[int]:
        response = api.get(f"/api/chats?{query}")
        assert response.status_code == 200, response.json()
        return [record["id"] for record in response.json()["data"]]

    assert ids(f"contact={ada.uuid}") == [first.id, failed.id]
    assert ids("status=failed") == [failed.id]
    assert ids("type=inbound") == [inbound.id]
    assert ids(f"contact={ada.uuid}&status=accepted") == [first.id]
    assert ids("ordering=-id") == [inbound.id, failed.id, first.id]


def test_a_contact_of_another_organization_filters_to_nothing(api, org_a, org_b):
    ChatFactory(organization=org_a)
    theirs = ChatFactory(organization=org_b)

    assert api.get(f"/api/chats?contact={theirs.contact.uuid}").json()["data"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [("status=lost", "status"), ("type=sideways", "type"), ("contact=nope", "contact")],
)
def test_bad_filter_values_are_a_400(api, org_a, query, field):
    response = api.get(f"/api/chats?{query}")

    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_chat_list_query_count_does_not_grow_with_the_page(api, org_a, django_assert_num_queries):
    for _ in range(25):
        ChatFactory(organization=org_a)

    with django_assert_num_queries(3):  # token, page (with contacts), count
        response = api.get("/api/chats?page=2")

    assert response.status_code == 200
    assert len(response.json()["data"]) == 10
    assert response.json()["meta"]["total"] == 25


def test_chats_sent_through_the_api_appear_in_the_list(api, org_a):
    api.post("/api/send", {"phone": "+4915123456789", "message": "One"}, format="json")
    api.post(
        "/api/send/template",
        {
            "phone": "+4915123456789",
            "template": {"name": "hello_world", "language": {"code": "en_US"}},
        },
        format="json",
    )

    records = api.get("/api/chats").json()["data"]

    assert [r["status"] for r in records] == ["accepted", "accepted"]
    assert records[0]["contact_id"] == records[1]["contact_id"]


def test_metadata_string_is_the_same_in_the_send_response_and_the_list(api, org_a):
    sent = api.post(
        "/api/send",
        {
            "phone": "+4915123456789",
            "message": "Pick one",
            "header": "Menu",
            "footer": "Thanks",
            "buttons": [{"id": "a", "title": "A"}],
        },
        format="json",
    ).json()["data"]["data"]["chat"]

    listed = api.get(f"/api/chats/{sent['uuid']}").json()["data"]

    # Byte for byte, on every database (PostgreSQL's jsonb reorders keys).
    assert listed["metadata"] == sent["metadata"]
    assert sent["metadata"] == (
        '{"type":"interactive","text":{"header":"Menu","body":"Pick one","footer":"Thanks"},'
        '"buttons":[{"type":"reply","text":"A","value":"a"}]}'
    )
