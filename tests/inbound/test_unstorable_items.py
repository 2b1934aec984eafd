"""Items a database cannot store never cost WhatsApp the rest of a delivery.

PostgreSQL refuses NUL in text and in jsonb (`\\u0000`), lone surrogates and non-finite
numbers; SQLite stores all of them. Each item is checked before the database sees it,
so both answer alike: an item whose identity or content cannot be stored is skipped
(counted in `processed.skipped`), one whose secondary field cannot be stored is kept
without that field, and the delivery is a 200 either way.
"""

import json

import pytest
from django.db import OperationalError
from django.test import Client

from contacts.models import Contact
from sending.models import Chat, ChatStatusEvent
from tests.inbound.conftest import deliver, envelope, sign, status, statuses, text_message
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db

SENDER = "14155552671"


def message(wam_id="wamid.BAD", sender=SENDER, **fields) -> dict:
    """One inbound message (a text unless `fields` say otherwise), without a profile."""
    return {
        "from": sender,
        "id": wam_id,
        "timestamp": "1700000000",
        **({"type": "text", "text": {"body": "hi"}} | fields),
    }


def nested(depth: int) -> dict:
    value: dict = {"id": "123"}
    for _ in range(depth):
        value = {"inner": value}
    return value


BAD_MESSAGES = [
    pytest.param(message(wam_id="wamid." + "A" * 294), id="message-id-of-300-characters"),
    pytest.param(message(wam_id="wamid.\x00A"), id="message-id-with-nul"),
    pytest.param(message(wam_id="wamid.\ud800"), id="message-id-with-a-lone-surrogate"),
    pytest.param(message(sender="1415555\x002671"), id="sender-with-nul"),
    pytest.param(message(text={"body": "hi\x00 there"}), id="text-with-nul"),
    pytest.param(message(text={"body": "hi \ud83d"}), id="text-with-a-lone-surrogate"),
    pytest.param(
        message(
            type="interactive",
            interactive={"type": "button_reply", "button_reply": {"id": "b", "title": "Y\x00"}},
        ),
        id="button-title-with-nul",
    ),
    pytest.param(
        message(type="image", image={"id": "1", "caption": "\udc00"}),
        id="media-caption-with-a-lone-surrogate",
    ),
    pytest.param(
        message(type="image", image={"id": "1", "file_size": float("inf")}),
        id="media-with-an-infinite-number",
    ),
    pytest.param(message(type="image", image={"id\x00": "1"}), id="media-key-with-nul"),
    pytest.param(message(type="ima\x00ge", **{"ima\x00ge": {"id": "1"}}), id="type-with-nul"),
    pytest.param(message(type="image", image=nested(900)), id="media-nested-900-deep"),
]


@pytest.mark.parametrize("bad", BAD_MESSAGES)
def test_a_message_that_cannot_be_stored_is_skipped_and_the_good_one_kept(webhook_org, bad):
    payload = envelope({"messages": [bad]}, text_message("hello", wam_id="wamid.GOOD"))

    response = deliver(webhook_org, payload)

    assert response.status_code == 200, response.content
    assert response.json()["processed"] == {
        "statuses": 0,
        "messages": 1,
        "duplicates": 0,
        "skipped": 1,
    }
    assert [chat.wam_id for chat in Chat.objects.all()] == ["wamid.GOOD"]
    assert Chat.objects.get().metadata == {"type": "text", "text": {"body": "hello"}}


@pytest.mark.parametrize(
    "profile_name, first_name",
    [
        pytest.param("Ada\x00", "Ada", id="nul"),
        pytest.param("A\ud800da", "Ada", id="lone-surrogate"),
        pytest.param("\x00\udfff", None, id="nothing-storable"),
    ],
)
def test_a_profile_name_that_cannot_be_stored_is_cleaned_and_the_message_kept(
    webhook_org, profile_name, first_name
):
    payload = envelope(text_message("hello", name=profile_name, wam_id="wamid.KEPT"))

    response = deliver(webhook_org, payload)

    assert response.status_code == 200, response.content
    assert response.json()["processed"]["messages"] == 1
    assert response.json()["processed"]["skipped"] == 0
    chat = Chat.objects.get(wam_id="wamid.KEPT")
    assert chat.metadata == {"type": "text", "text": {"body": "hello"}}
    assert Contact.objects.get().first_name == first_name


@pytest.fixture
def sent(webhook_org):
    return ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(status("wamid." + "B" * 294, "delivered", 200), id="id-of-300-characters"),
        pytest.param(status("wamid.\x00B", "delivered", 200), id="id-with-nul"),
        pytest.param(status("wamid.\ud800", "delivered", 200), id="id-with-a-lone-surrogate"),
    ],
)
def test_a_status_that_cannot_be_stored_is_skipped_and_the_batch_kept(webhook_org, sent, bad):
    payload = envelope(
        statuses(status("wamid.OUT1", "sent", 100), bad, status("wamid.OUT1", "read", 300))
    )

    response = deliver(webhook_org, payload)

    assert response.status_code == 200, response.content
    assert response.json()["processed"] == {
        "statuses": 2,
        "messages": 0,
        "duplicates": 0,
        "skipped": 1,
    }
    assert list(ChatStatusEvent.objects.values_list("wam_id", "status")) == [
        ("wamid.OUT1", "sent"),
        ("wamid.OUT1", "read"),
    ]
    sent.refresh_from_db()
    assert sent.status == "read"


def failure(title: str, **extra) -> dict:
    return {"code": 131047, "title": title, "message": title, **extra}


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(failure("Re-engagement\x00 message"), id="title-with-nul"),
        pytest.param(failure("Re-engagement message\udc80"), id="title-with-a-lone-surrogate"),
        pytest.param(
            failure("Re-engagement message", error_data={"details": "24 hours\x00"}),
            id="details-with-nul",
        ),
    ],
)
def test_a_failure_whose_error_cannot_be_stored_keeps_its_code_and_clean_title(
    webhook_org, sent, error
):
    payload = envelope(
        statuses(status("wamid.OUT1", "failed", 200, errors=[error])),
        text_message("hello", wam_id="wamid.GOOD"),
    )

    response = deliver(webhook_org, payload)

    assert response.status_code == 200, response.content
    assert response.json()["processed"] == {
        "statuses": 1,
        "messages": 1,
        "duplicates": 0,
        "skipped": 0,
    }
    sent.refresh_from_db()
    assert (sent.status, sent.error_code, sent.error_title) == (
        "failed",
        131047,
        "Re-engagement message",
    )
    assert sent.error_details is None  # the error object as a whole could not be kept
    event = ChatStatusEvent.objects.get()
    assert (event.error_code, event.error_title, event.error_details) == (
        131047,
        "Re-engagement message",
        None,
    )
    assert Chat.objects.filter(wam_id="wamid.GOOD").exists()


def test_a_database_that_is_gone_is_a_503_not_a_skipped_item(webhook_org, monkeypatch):
    """WhatsApp retries what did not get a 200: an outage must not look like a bad item."""

    def gone(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr("inbound.services.message_items.contact_for_whatsapp_user", gone)
    payload = envelope(text_message("hello", wam_id="wamid.LATER"))

    body = json.dumps(payload).encode()
    response = Client(raise_request_exception=False).post(
        f"/webhooks/whatsapp/{webhook_org.uuid}",
        body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=sign(body),
    )

    assert response.status_code == 503
    assert response.json()["statusCode"] == 503
    assert not Chat.objects.exists()
