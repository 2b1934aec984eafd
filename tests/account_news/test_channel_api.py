"""GET and PATCH /api/channel, and the 24-hour customer-service window it turns on."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from business_numbers.gateway import sandbox
from business_numbers.models import Number
from contacts.models import Contact
from sending.models import Chat, ChatStatus, ChatType
from sending.services.refusals import check_service_window
from tests.channel import set_channel, stored_channel
from tests.factories import ContactFactory, create_chat

pytestmark = pytest.mark.django_db

KEYS = {
    "phone_number_id",
    "display_phone_number",
    "verified_name",
    "quality_rating",
    "messaging_limit",
    "account_status",
    "restrictions",
    "enforce_service_window",
    "updated_at",
}


def test_the_sandbox_reports_a_healthy_number(api):
    response = api.get("/api/channel")
    assert response.status_code == 200
    data = response.json()["data"]
    assert set(data) == KEYS
    assert (data["quality_rating"], data["messaging_limit"], data["account_status"]) == (
        "GREEN",
        "TIER_UNLIMITED",
        "ACTIVE",
    )
    assert data["restrictions"] == [] and data["enforce_service_window"] is False


def test_a_cloud_api_number_not_reported_yet_is_unknown(api, cloud_org):
    data = api.get("/api/channel").json()["data"]
    assert set(data) == KEYS
    assert data["phone_number_id"] == "106540352242922"
    assert data["quality_rating"] == "UNKNOWN"
    assert data["messaging_limit"] is None and data["account_status"] is None
    assert data["updated_at"] is None


def test_each_organization_sees_its_own(api, api_b, org_a, org_b):
    set_channel(org_b, kind="cloud_api", phone_number_id="42", quality_rating="RED")
    assert api.get("/api/channel").json()["data"]["quality_rating"] == "GREEN"
    assert api_b.get("/api/channel").json()["data"]["quality_rating"] == "RED"


def test_patch_turns_the_window_on_and_off(api, org_a):
    response = api.patch("/api/channel", {"enforce_service_window": True}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["statusCode"] == 200 and body["message"] == "Request processed successfully"
    assert body["data"]["enforce_service_window"] is True
    assert stored_channel(org_a).enforce_service_window is True
    api.patch("/api/channel", {"enforce_service_window": False}, format="json")
    assert stored_channel(org_a).enforce_service_window is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "enforce_service_window"),
        ({"enforce_service_window": "yes"}, "enforce_service_window"),
        ({"enforce_service_window": None}, "enforce_service_window"),
        ({"enforce_service_window": True, "quality_rating": "GREEN"}, "quality_rating"),
    ],
)
def test_bad_settings_are_a_clear_400_and_change_nothing(api, org_a, body, field):
    response = api.patch("/api/channel", body, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == "The given data was invalid."
    assert field in response.json()["errors"]
    assert stored_channel(org_a).enforce_service_window is False


def test_other_methods_are_refused(api):
    assert api.post("/api/channel", {}, format="json").status_code == 405
    assert api.delete("/api/channel").status_code == 405


# The 24-hour window ------------------------------------------------------------------------

PHONE = "14155552671"


def inbound(org, *, hours_ago: float, phone: str = PHONE) -> Chat:
    contact = Contact.objects.filter(organization=org, phone=phone).first() or ContactFactory(
        organization=org, phone=phone
    )
    chat = create_chat(
        organization=org, contact=contact, type=ChatType.INBOUND, status=ChatStatus.RECEIVED
    )
    Chat.objects.filter(pk=chat.pk).update(created_at=timezone.now() - timedelta(hours=hours_ago))
    return chat


def send_text(api):
    return api.post("/api/send", {"phone": f"+{PHONE}", "message": "Hello"}, format="json")


def send_media(api):
    return api.post(
        "/api/send/media",
        {"phone": f"+{PHONE}", "media_type": "image", "media_url": "https://example.com/a.jpg"},
        format="json",
    )


@pytest.fixture
def enforcing(org_a):
    sandbox.clear_outbox()
    set_channel(org_a, enforce_service_window=True)
    return org_a


@pytest.mark.parametrize("send", [send_text, send_media])
def test_outside_the_window_a_free_form_send_is_refused_without_a_call(api, enforcing, send):
    inbound(enforcing, hours_ago=25)
    response = send(api)
    assert response.status_code == 422
    body = response.json()
    assert body["channel_error"]["code"] == 131047
    assert "24 hours" in body["message"]
    assert sandbox.sent_messages() == []
    assert not Chat.objects.filter(type=ChatType.OUTBOUND).exists()


def test_a_number_that_never_wrote_is_refused_and_no_contact_is_made(api, enforcing):
    assert send_text(api).status_code == 422
    assert not Contact.objects.exists()


@pytest.mark.parametrize("send", [send_text, send_media])
def test_inside_the_window_it_is_sent(api, enforcing, send):
    inbound(enforcing, hours_ago=23)
    assert send(api).status_code == 200
    assert len(sandbox.sent_messages()) == 1


def test_an_old_message_imported_from_history_today_does_not_open_the_window(api, enforcing):
    imported = inbound(enforcing, hours_ago=0)
    Chat.objects.filter(pk=imported.pk).update(sent_at=timezone.now() - timedelta(days=30))
    assert send_text(api).status_code == 422


def test_another_organizations_inbound_does_not_open_the_window(api, enforcing, org_b):
    inbound(org_b, hours_ago=1)
    assert send_text(api).status_code == 422


def test_templates_are_sent_outside_the_window(api, enforcing):
    response = api.post(
        "/api/send/template",
        {"phone": f"+{PHONE}", "template": {"name": "hello_world", "language": {"code": "en_US"}}},
        format="json",
    )
    assert response.status_code == 200


def test_without_the_setting_nothing_is_checked(api, org_a):
    sandbox.clear_outbox()
    with CaptureQueriesContext(connection) as queries:
        assert send_text(api).status_code == 200
    # No look for an inbound chat (the conversation's upsert names `last_inbound_at`).
    assert not any("'inbound'" in query["sql"] for query in queries.captured_queries)


def test_the_window_look_up_is_one_indexed_query(enforcing):
    inbound(enforcing, hours_ago=1)
    enforcing.refresh_from_db()
    number = Number.objects.default_for(enforcing)
    with CaptureQueriesContext(connection) as queries:
        check_service_window(enforcing, PHONE, number)
    assert len(queries.captured_queries) <= 2  # the channel settings, if not cached, and it
    if connection.vendor == "postgresql":
        sql = queries.captured_queries[-1]["sql"]
        with connection.cursor() as cursor:
            cursor.execute("SET enable_seqscan = off")
            cursor.execute("EXPLAIN " + sql)
            plan = " ".join(row[0] for row in cursor.fetchall())
            cursor.execute("SET enable_seqscan = on")
        assert "contact_inbound_chats" in plan
