"""/api/webhooks: the endpoints and their deliveries, tenant-scoped, bad input a 400."""

import json

import pytest

from events import services
from events.delivery import fan_out_all
from events.models import Endpoint, Event
from tests.background import run_tasks
from tests.events.conftest import run_all

pytestmark = pytest.mark.django_db


def create(api, **body):
    return api.post("/api/webhooks", {"url": "https://example.com/hook", **body}, format="json")


def test_create_then_show_with_a_secret(api, org_a):
    response = create(api, events=["message.received", "contact.created"])
    assert response.status_code == 200
    assert response.json()["message"] == "Request processed successfully"
    uuid = response.json()["id"]
    data = api.get(f"/api/webhooks/{uuid}").json()["data"]
    assert set(data) == {
        "uuid",
        "url",
        "events",
        "format",
        "is_active",
        "disabled_reason",
        "disabled_at",
        "circuit",
        "backed_off_until",
        "failures_in_a_row",
        "secret",
        "created_at",
        "updated_at",
    }
    assert data["url"] == "https://example.com/hook"
    assert data["events"] == ["contact.created", "message.received"]
    assert data["is_active"] is True
    assert data["secret"].startswith("whsec_")
    import base64

    assert len(base64.b64decode(data["secret"].removeprefix("whsec_"))) >= 24


def test_creation_and_rotation_show_the_secret_beside_the_write_result(api, org_a):
    created = create(api).json()
    uuid = created["id"]
    endpoint = Endpoint.objects.get(uuid=uuid)
    assert created == {
        "statusCode": 200,
        "id": uuid,
        "message": "Request processed successfully",
        "secret": endpoint.secret,
    }
    rotated = api.post(f"/api/webhooks/{uuid}/rotate-secret").json()
    endpoint.refresh_from_db()
    assert rotated["id"] == uuid and rotated["secret"] == endpoint.secret != created["secret"]
    assert api.get(f"/api/webhooks/{uuid}").json()["data"]["secret"] == rotated["secret"]


def test_a_replayed_creation_shows_the_secret_that_was_never_stored_with_it(api):
    from messaging_project.api.models import IdempotencyKey

    first = api.post(
        "/api/webhooks",
        {"url": "https://example.com/hook"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="create-once",
    )
    again = api.post(
        "/api/webhooks",
        {"url": "https://example.com/hook"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="create-once",
    )
    assert again.json() == first.json() and first.json()["secret"].startswith("whsec_")
    assert Endpoint.objects.count() == 1
    stored = IdempotencyKey.objects.get(key="create-once").response_body
    assert "secret" not in stored and "whsec_" not in json.dumps(stored)


def test_a_refused_creation_shows_no_secret(api):
    response = create(api, url="not a url")
    assert response.status_code == 400 and "secret" not in response.json()


def test_events_left_out_means_every_event(api):
    uuid = create(api).json()["id"]
    assert api.get(f"/api/webhooks/{uuid}").json()["data"]["events"] == []


def test_list_is_a_laravel_page(api):
    create(api)
    page = api.get("/api/webhooks").json()
    assert page["meta"]["total"] == 1
    assert page["data"][0]["url"] == "https://example.com/hook"


def test_the_list_never_shows_a_secret_the_detail_does(api):
    uuid = create(api).json()["id"]
    api.post(f"/api/webhooks/{uuid}/rotate-secret")
    [listed] = api.get("/api/webhooks").json()["data"]
    detail = api.get(f"/api/webhooks/{uuid}").json()["data"]
    assert "secret" not in listed and "whsec_" not in json.dumps(listed)
    assert detail["secret"].startswith("whsec_")
    assert listed == {key: value for key, value in detail.items() if key != "secret"}


def test_the_openapi_list_of_endpoints_has_no_secret():
    from drf_spectacular.generators import SchemaGenerator

    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    page = components["EventWebhookPage"]["properties"]["data"]["items"]["$ref"]
    listed = components[page.rsplit("/", 1)[1]]["properties"]
    detail = components["EventWebhookDetail"]["properties"]["data"]["$ref"]
    assert "secret" not in listed and "disabled_at" in listed
    assert "secret" in components[detail.rsplit("/", 1)[1]]["properties"]


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/hook", "example.com/hook", "javascript:alert(1)", "https://", 42, ""],
)
def test_a_url_that_is_not_http_is_a_400_on_url(api, url):
    response = create(api, url=url)
    assert response.status_code == 400
    assert "url" in response.json()["errors"]
    assert Endpoint.objects.count() == 0


def test_an_unknown_event_is_a_400_on_events(api):
    response = create(api, events=["message.received", "message.exploded"])
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert any(key.startswith("events") for key in errors), errors
    assert errors["events.1"] == [
        "Unknown event; the events are: " + ", ".join(Event.values) + "."
    ], errors
    assert Endpoint.objects.count() == 0


def test_events_must_be_a_list(api):
    response = create(api, events="message.received")
    assert response.status_code == 400
    assert "events" in response.json()["errors"]


def test_an_eleventh_endpoint_is_a_400(api, org_a):
    for n in range(10):
        assert create(api, url=f"https://example.com/{n}").status_code == 200
    response = create(api, url="https://example.com/eleven")
    assert response.status_code == 400
    assert response.json()["errors"]["url"] == [services.TOO_MANY_ENDPOINTS]
    # A deleted one frees its place.
    uuid = api.get("/api/webhooks").json()["data"][0]["uuid"]
    api.delete(f"/api/webhooks/{uuid}")
    assert create(api, url="https://example.com/eleven").status_code == 200


def test_the_limit_is_per_organization(api, api_b):
    for n in range(10):
        create(api, url=f"https://example.com/{n}")
    assert create(api_b).status_code == 200


def test_edit_changes_only_the_fields_sent(api):
    uuid = create(api, events=["contact.created"]).json()["id"]
    assert (
        api.put(
            f"/api/webhooks/{uuid}", {"url": "https://example.org/new"}, format="json"
        ).status_code
        == 200
    )
    data = api.get(f"/api/webhooks/{uuid}").json()["data"]
    assert data["url"] == "https://example.org/new"
    assert data["events"] == ["contact.created"]
    api.patch(f"/api/webhooks/{uuid}", {"events": None}, format="json")
    assert api.get(f"/api/webhooks/{uuid}").json()["data"]["events"] == []


def test_a_bad_edit_changes_nothing(api):
    uuid = create(api).json()["id"]
    response = api.patch(
        f"/api/webhooks/{uuid}", {"url": "gopher://x", "events": ["nope"]}, format="json"
    )
    assert response.status_code == 400
    assert {"url"} <= set(response.json()["errors"])
    assert api.get(f"/api/webhooks/{uuid}").json()["data"]["url"] == "https://example.com/hook"


def test_delete_is_soft_and_a_second_delete_is_a_404(api):
    uuid = create(api).json()["id"]
    assert api.delete(f"/api/webhooks/{uuid}").status_code == 200
    assert api.get(f"/api/webhooks/{uuid}").status_code == 404
    assert api.delete(f"/api/webhooks/{uuid}").status_code == 404
    assert Endpoint.objects.filter(uuid=uuid, deleted_at__isnull=False).exists()


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("get", ""),
        ("put", ""),
        ("patch", ""),
        ("delete", ""),
        ("get", "/deliveries"),
        ("post", "/rotate-secret"),
    ],
)
def test_another_organizations_endpoint_is_not_found(api, api_b, method, suffix):
    uuid = create(api).json()["id"]
    response = getattr(api_b, method)(
        f"/api/webhooks/{uuid}{suffix}", {"url": "https://evil.example/"}, format="json"
    )
    assert response.status_code == 404
    assert api_b.get("/api/webhooks").json()["data"] == []
    data = api.get(f"/api/webhooks/{uuid}").json()["data"]
    assert data["url"] == "https://example.com/hook"


def test_a_malformed_uuid_is_a_404(api):
    assert api.get("/api/webhooks/not-a-uuid").status_code == 404
    assert api.get("/api/webhooks/not-a-uuid/deliveries").status_code == 404


def test_deliveries_are_listed_newest_first(api, org_a, endpoint, receiver):
    receiver.fail_next(500)
    api.post("/api/contact-groups", {"name": "First"}, format="json")
    run_tasks()  # its first attempt gets the 500 (the due deliveries are posted at once)
    api.post("/api/contact-groups", {"name": "Second"}, format="json")
    run_all()
    page = api.get(f"/api/webhooks/{endpoint.uuid}/deliveries").json()
    assert page["meta"]["total"] == 2
    assert [d["event"] for d in page["data"]] == ["group.created", "group.created"]
    first, second = page["data"][1], page["data"][0]
    assert set(first) == {
        "id",
        "event",
        "status",
        "attempts",
        "response_status",
        "last_error",
        "next_attempt_at",
        "created_at",
    }
    assert (first["attempts"], first["status"]) == (2, "succeeded")
    assert (second["attempts"], second["status"]) == (1, "succeeded")


def test_the_list_takes_a_fixed_number_of_queries(api, org_a, django_assert_num_queries):
    for n in range(3):
        create(api, url=f"https://example.com/{n}")
    with django_assert_num_queries(2):  # token; the page with its total
        assert len(api.get("/api/webhooks").json()["data"]) == 3


def test_the_deliveries_take_a_fixed_number_of_queries(
    api, endpoint, receiver, django_assert_num_queries
):
    for n in range(3):
        api.post("/api/contact-groups", {"name": f"G{n}"}, format="json")
    fan_out_all()
    with django_assert_num_queries(3):  # token, endpoint; the page with its total
        assert len(api.get(f"/api/webhooks/{endpoint.uuid}/deliveries").json()["data"]) == 3


def test_the_records_have_exactly_the_documented_fields(api, endpoint, receiver):
    from events.api.schema import DeliveryRecordSerializer, EndpointRecordSerializer

    detail = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]
    assert set(detail) == set(EndpointRecordSerializer().fields)
    api.post("/api/contact-groups", {"name": "G"}, format="json")
    fan_out_all()
    [delivery] = api.get(f"/api/webhooks/{endpoint.uuid}/deliveries").json()["data"]
    assert set(delivery) == set(DeliveryRecordSerializer().fields)
