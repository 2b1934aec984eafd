"""Deliveries of statuses alone, queued before the rest of the stack (inbound/middleware.py):
the view's answer and row for them, the view itself for anything else, and a kept
secret or number that is no longer true never used."""

import json
import logging

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from business_numbers.services import configure_channel, create_number, delete_number
from inbound.middleware import WEBHOOK_PATH
from inbound.models import QueuedStatuses
from sending.models import Chat
from tests.channel import PHONE_NUMBER_ID
from tests.factories import OrganizationFactory
from tests.inbound.conftest import APP_SECRET, envelope, sign, status, statuses, text_message
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db

OTHER_NUMBER_ID = "106540352249999"
MIDDLEWARE = "inbound.middleware.StatusWebhookMiddleware"


@pytest.fixture
def queued(settings):
    settings.WHATSAPP_STATUSES_QUEUED = True


@pytest.fixture
def cloud(org_a):
    """Organization A on the Cloud API, its webhooks signed with APP_SECRET."""
    configure_channel(
        organization=org_a,
        phone_number_id=PHONE_NUMBER_ID,
        access_token="token",
        app_secret=APP_SECRET,
    )
    return org_a


def without_the_middleware(settings) -> list[str]:
    return [name for name in settings.MIDDLEWARE if name != MIDDLEWARE]


def post(client: Client, organization, payload, *, secret: str = APP_SECRET, **headers):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return client.post(
        f"/webhooks/whatsapp/{organization.uuid}",
        body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=sign(body, secret),
        **headers,
    )


def one_status(wam_id: str = "wamid.OUT1", number: str = PHONE_NUMBER_ID) -> dict:
    value = statuses(status(wam_id, "delivered", 100))
    value["metadata"] = {"display_phone_number": "15550000000", "phone_number_id": number}
    return envelope(value)


def test_the_path_is_the_webhooks_url():
    url = reverse("whatsapp-webhook", args=["6f1c3b0e-8a56-4d0e-9c1b-2f8f7b8e0a11"])
    assert url.startswith(WEBHOOK_PATH) and url.count("/") == WEBHOOK_PATH.count("/")


def test_the_answer_and_the_row_are_the_views(queued, settings, caplog):
    """The same delivery to two organizations, with and without the middleware."""
    payload = envelope(
        statuses(status("wamid.A", "sent", 100), status("wamid.B", "sent", 100)),
        statuses(status("wamid.A", "delivered", 200)),
    )
    outcomes = []
    for middleware in (without_the_middleware(settings), settings.MIDDLEWARE):
        organization = OrganizationFactory()
        configure_channel(
            organization=organization,
            phone_number_id=PHONE_NUMBER_ID if not outcomes else OTHER_NUMBER_ID,
            access_token="token",
            app_secret=APP_SECRET,
        )
        for change in payload["entry"][0]["changes"]:
            change["value"]["metadata"]["phone_number_id"] = (
                PHONE_NUMBER_ID if not outcomes else OTHER_NUMBER_ID
            )
        with override_settings(MIDDLEWARE=middleware), caplog.at_level(logging.INFO):
            caplog.clear()
            response = post(Client(), organization, payload)
        (row,) = QueuedStatuses.objects.filter(organization=organization)
        logged = [r.getMessage() for r in caplog.records if r.name == "inbound.api.webhook"]
        outcomes.append(
            (response.status_code, response.json(), row.changes, logged, response.headers)
        )
        for change in row.changes:
            change["metadata"]["phone_number_id"] = "the number"
    by_view, by_middleware = outcomes
    assert by_middleware[0] == 200
    assert by_middleware[1] == by_view[1]
    assert by_middleware[1]["processed"]["queued"] == 3
    assert by_middleware[2] == by_view[2]
    assert [line.split(":", 1)[1] for line in by_middleware[3]] == [
        line.split(":", 1)[1] for line in by_view[3]
    ]
    # A length, as the view's answer has (CommonMiddleware's): without one, gunicorn
    # would send the early answer chunked.
    assert by_middleware[4]["Content-Length"] == by_view[4]["Content-Length"]


def test_the_secret_and_numbers_are_read_once_then_kept(cloud, queued):
    client = Client()
    with CaptureQueriesContext(connection) as first:
        assert post(client, cloud, one_status("wamid.1")).status_code == 200
    with CaptureQueriesContext(connection) as then:
        assert post(client, cloud, one_status("wamid.2")).status_code == 200
    # The organization's secret and numbers, then the insert; then the insert alone.
    assert len(first) == 2 and len(then) == 1
    assert then[0]["sql"].lstrip().startswith("INSERT INTO")
    assert QueuedStatuses.objects.count() == 2


def test_a_sandbox_organizations_statuses_are_taken_too(webhook_org, queued):
    # No number of the organization has a phone number id: every change is the default's.
    response = post(Client(), webhook_org, one_status(number="anything"))
    assert response.json()["processed"]["queued"] == 1
    assert QueuedStatuses.objects.count() == 1


@pytest.mark.parametrize(
    "payload",
    [
        envelope(text_message("hello")),  # a message
        envelope({**statuses(status("wamid.OUT1", "read", 1)), **text_message("hi")}),
        envelope(statuses()),  # no status
        {"entry": [{"changes": [{"field": "account_update", "value": {"x": 1}}]}]},
        {"entry": "not a list"},
        [1, 2],
    ],
    ids=["message", "status-and-message", "no-status", "news", "bad-entry", "array"],
)
def test_anything_but_statuses_alone_is_the_views(cloud, queued, payload, settings):
    client = Client()
    with override_settings(MIDDLEWARE=without_the_middleware(settings)):
        expected = post(Client(), cloud, payload)
    Chat.objects.all().delete()
    QueuedStatuses.objects.all().delete()
    response = post(client, cloud, payload)
    assert (response.status_code, response.json()) == (expected.status_code, expected.json())


def test_another_number_and_two_numbers_are_the_views(cloud, queued):
    client = Client()
    other = post(client, cloud, one_status(number=OTHER_NUMBER_ID)).json()["processed"]
    assert other == {"statuses": 0, "messages": 0, "duplicates": 0, "skipped": 0, "other_number": 1}
    both = envelope(
        one_status()["entry"][0]["changes"][0]["value"],
        one_status(number=OTHER_NUMBER_ID)["entry"][0]["changes"][0]["value"],
    )
    processed = post(client, cloud, both).json()["processed"]
    assert processed["queued"] == 1 and processed["other_number"] == 1


def test_a_wrong_signature_and_a_bad_body_get_the_views_answer(cloud, queued):
    client = Client()
    assert post(client, cloud, one_status(), secret="not the secret").status_code == 401
    body = b'{"entry": [}'
    assert post(client, cloud, body).status_code == 400
    assert not QueuedStatuses.objects.exists()


def test_the_queue_off_leaves_every_delivery_to_the_view(cloud):
    processed = post(Client(), cloud, one_status()).json()["processed"]
    assert "queued" not in processed and not QueuedStatuses.objects.exists()


def test_a_new_secret_is_used_at_once_and_the_old_one_no_more(cloud, queued):
    client = Client()
    assert post(client, cloud, one_status("wamid.1")).status_code == 200  # kept
    configure_channel(
        organization=cloud, phone_number_id=PHONE_NUMBER_ID, access_token="t", app_secret="new"
    )
    # The kept secret matches the signature, but the insert sees it is no longer true.
    assert post(client, cloud, one_status("wamid.2")).status_code == 401
    assert post(client, cloud, one_status("wamid.3"), secret="new").status_code == 200
    assert post(client, cloud, one_status("wamid.4"), secret="new").status_code == 200
    queued_ids = [
        row.changes[0]["statuses"][0]["id"] for row in QueuedStatuses.objects.order_by("id")
    ]
    assert queued_ids == ["wamid.1", "wamid.3", "wamid.4"]


def test_a_removed_number_is_no_longer_the_organizations(cloud, queued):
    second = create_number(
        organization=cloud, phone_number_id=OTHER_NUMBER_ID, access_token="token"
    )
    client = Client()
    assert post(client, cloud, one_status(number=OTHER_NUMBER_ID)).json()["processed"] == {
        "statuses": 0,
        "messages": 0,
        "duplicates": 0,
        "skipped": 0,
        "queued": 1,
    }
    delete_number(number=second)
    processed = post(client, cloud, one_status(number=OTHER_NUMBER_ID)).json()["processed"]
    assert processed.get("other_number") == 1 and "queued" not in processed
    assert QueuedStatuses.objects.count() == 1


def test_a_host_not_allowed_is_refused(cloud, queued):
    response = post(Client(), cloud, one_status(), HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert not QueuedStatuses.objects.exists()


def test_an_unknown_organization_is_the_views_404(queued):
    response = Client().post(
        "/webhooks/whatsapp/6f1c3b0e-8a56-4d0e-9c1b-2f8f7b8e0a11",
        json.dumps(one_status()),
        content_type="application/json",
    )
    assert response.status_code == 404


@pytest.mark.parametrize("early", [True, False], ids=["middleware", "view"])
def test_a_change_a_database_cannot_store_is_applied_in_the_request(cloud, queued, settings, early):
    """Queued, it would be kept whole, and PostgreSQL refuses a NUL in jsonb: each of its
    statuses is read and stored as with the queue off (the NUL dropped from the field)."""
    chat = ChatFactory(organization=cloud, wam_id="wamid.OUT1")
    payload = one_status()
    payload["entry"][0]["changes"][0]["value"]["statuses"][0]["recipient_id"] = "14\u0000"
    middleware = settings.MIDDLEWARE if early else without_the_middleware(settings)
    with override_settings(MIDDLEWARE=middleware):
        response = post(Client(), cloud, payload)
    assert response.status_code == 200
    assert response.json()["processed"]["statuses"] == 1
    assert not QueuedStatuses.objects.exists()
    chat.refresh_from_db()
    assert chat.status == "delivered"
