"""Odd answers from the Cloud API: whatever the channel puts in its answer (types, sizes,
NUL, lone surrogates, huge numbers, nested junk), the send gets the contract's status,
exactly one chat records it, and a retry with the same Idempotency-Key replays the
answer without reaching WhatsApp again.

PostgreSQL refuses NUL in text and in jsonb, no driver encodes a lone surrogate, JSON
cannot carry infinity: before, each of these was a 500 after WhatsApp had the message,
and the retry sent it again.
"""

import json

import pytest

from sending.models import Chat, ChatStatusEvent
from tests.channel import set_channel
from tests.inbound.conftest import APP_SECRET, deliver, envelope, status, statuses

PHONE = "+4915123456789"
DIGITS = "4915123456789"
WAM_ID = "wamid.ODDANSWER"


def post(api, key: str):
    body = json.dumps({"phone": PHONE, "message": "Hello"})
    return api.post("/api/send", body, content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)


def refusal(**error) -> dict:
    """An HTTP 400 with Graph's error object, some of its fields odd."""
    return {"status": 400, "json": {"error": {"message": "Odd", "type": "OAuthException", **error}}}


def accepted(**fields) -> dict:
    """A 200 with a usable message id, some other field odd."""
    answer = {
        "messaging_product": "whatsapp",
        "contacts": [{"input": DIGITS, "wa_id": DIGITS}],
        "messages": [{"id": WAM_ID}],
    }
    return {"json": {**answer, **fields}}


def raw(status: int, body: str) -> dict:
    return {"status": status, "body": body.encode(), "content_type": "application/json"}


NESTED = "[" * 100_000 + "]" * 100_000  # deeper than Python's json module can follow

REFUSED = [
    # (the answer, what the chat's error fields hold: code, title, details)
    pytest.param(
        refusal(code=2**40),
        (None, "Odd", {"code": 2**40}),
        id="error-code-beyond-the-column",
    ),
    pytest.param(
        refusal(code=-(2**70)),
        (None, "Odd", {"code": str(-(2**70))}),
        id="error-code-beyond-64-bits",
    ),
    pytest.param(refusal(code=True), (None, "Odd", {"code": True}), id="error-code-true"),
    pytest.param(
        refusal(code=131047, message="Re-engagement\x00 message"),
        (131047, "Re-engagement\ufffd message", {}),
        id="nul-in-the-message",
    ),
    pytest.param(
        refusal(code=131047, message="Re-engagement \ud83d message"),
        (131047, "Re-engagement \ufffd message", {}),
        id="lone-surrogate-in-the-message",
    ),
    pytest.param(
        refusal(code=131047, message="x" * 100_000),
        (131047, "x" * 1000, {}),
        id="message-of-100000-characters",
    ),
    pytest.param(
        refusal(code=131047, fbtrace_id="A\ud800B", error_data={"details": "no\x00pe"}),
        (131047, "Odd", {"fbtrace_id": "A\ufffdB", "details": "no\ufffdpe"}),
        id="nul-and-surrogate-in-the-details",
    ),
    pytest.param(
        refusal(code=131047, error_data={"details": {"a\x00b": [{"c": "\udc00"}]}}),
        (131047, "Odd", {"details": {"a\ufffdb": [{"c": "\ufffd"}]}}),
        id="nested-junk-in-error-data",
    ),
    pytest.param(
        refusal(code=131047, error_data={"details": [[[[[[[[[["deep"]]]]]]]]]]}),
        (131047, "Odd", {"details": [[[[[[[["…"]]]]]]]]}),  # 8 levels kept
        id="error-data-nested-ten-deep",
    ),
    pytest.param(
        raw(400, '{"error": {"message": "Odd", "code": 100, "error_data": {"details": 1e999}}}'),
        (100, "Odd", {"details": "inf"}),
        id="infinity-in-error-data",
    ),
    pytest.param(
        raw(400, '{"error": {"message": "Odd", "code": 100, "error_data": {"details": NaN}}}'),
        (100, "Odd", {"details": "nan"}),
        id="nan-in-error-data",
    ),
]


@pytest.mark.parametrize(("answer", "error"), REFUSED)
def test_an_odd_refusal_is_a_422_and_one_failed_chat_and_the_retry_replays_it(
    api, cloud_org, graph, answer, error
):
    graph.reply(**answer)

    first = post(api, "odd")

    assert first.status_code == 422, first.content
    body = first.json()
    code, title, details = error
    assert body["message"] == title
    assert (body["channel_error"]["code"], body["channel_error"]["message"]) == (code, title)
    [chat] = Chat.objects.all()
    assert (chat.status, chat.wam_id, chat.error_code, chat.error_title) == (
        "failed",
        None,
        code,
        title,
    )
    assert {field: chat.error_details[field] for field in details} == details
    # What the API lists is what the send answered.
    [listed] = api.get("/api/chats").json()["data"]
    assert listed["error"]["code"] == code and listed["error"]["message"] == title

    retried = post(api, "odd")

    assert retried.status_code == 422 and retried["Idempotent-Replayed"] == "true"
    assert retried.json() == body
    assert len(graph.requests) == 1
    assert Chat.objects.count() == 1


UNREADABLE = [
    pytest.param(raw(400, NESTED), 502, "http_error", id="error-nested-beyond-recursion"),
    pytest.param(raw(200, NESTED), 502, "invalid_response", id="200-nested-beyond-recursion"),
]


@pytest.mark.parametrize(("answer", "status_code", "error_type"), UNREADABLE)
def test_an_answer_nested_too_deep_to_read_is_a_502_and_one_failed_chat(
    api, cloud_org, graph, answer, status_code, error_type
):
    graph.reply(**answer)

    first = post(api, "deep")

    assert first.status_code == status_code, first.content
    assert first.json()["channel_error"]["type"] == error_type
    assert Chat.objects.get().status == "failed"
    assert post(api, "deep").status_code == status_code
    assert len(graph.requests) == 1
    assert Chat.objects.count() == 1


ACCEPTED = [
    # (the answer, the chat's status, the wa_id answered)
    pytest.param(accepted(contacts="abc"), "accepted", DIGITS, id="contacts-a-string"),
    pytest.param(accepted(contacts=[["abc"]]), "accepted", DIGITS, id="contacts-a-list-of-lists"),
    pytest.param(
        accepted(contacts=[{"input": DIGITS, "wa_id": "\ud800"}]),
        "accepted",
        DIGITS,
        id="wa-id-a-lone-surrogate",
    ),
    pytest.param(
        accepted(contacts=[{"input": DIGITS, "wa_id": {"id": DIGITS}}]),
        "accepted",
        DIGITS,
        id="wa-id-an-object",
    ),
    pytest.param(
        accepted(contacts=[{"input": "\x00", "wa_id": "4915100000000"}]),
        "accepted",
        "4915100000000",
        id="wa-id-of-whatsapp-kept",
    ),
    pytest.param(
        accepted(messaging_product="what\ud800sapp"),
        "accepted",
        DIGITS,
        id="messaging-product-a-lone-surrogate",
    ),
    pytest.param(
        accepted(messages=[{"id": WAM_ID, "message_status": "received"}]),
        "accepted",
        DIGITS,
        id="message-status-of-an-inbound-message",
    ),
    pytest.param(
        accepted(messages=[{"id": WAM_ID, "message_status": "held_for_quality_assessment"}]),
        "held_for_quality_assessment",
        DIGITS,
        id="message-status-held",
    ),
]


@pytest.mark.parametrize(("answer", "chat_status", "wa_id"), ACCEPTED)
def test_an_accepted_message_with_odd_fields_is_a_200_and_one_chat_and_the_retry_replays_it(
    api, cloud_org, graph, answer, chat_status, wa_id
):
    graph.reply(**answer)

    first = post(api, "odd")

    assert first.status_code == 200, first.content
    data = first.json()["data"]["data"]
    assert data["messaging_product"] == "whatsapp"
    assert data["contacts"] == [{"input": PHONE, "wa_id": wa_id}]
    assert data["messages"] == [{"id": WAM_ID}]
    [chat] = Chat.objects.all()
    assert (chat.status, chat.wam_id) == (chat_status, WAM_ID)

    retried = post(api, "odd")

    assert retried.status_code == 200 and retried["Idempotent-Replayed"] == "true"
    assert retried.json() == first.json()
    assert len(graph.requests) == 1
    assert Chat.objects.count() == 1


def test_a_200_whose_message_status_is_failed_is_a_refusal_that_keeps_the_message_id(
    api, cloud_org, graph
):
    graph.reply(**accepted(messages=[{"id": WAM_ID, "message_status": "failed"}]))

    first = post(api, "failed")

    assert first.status_code == 422, first.content
    assert first.json() == {
        "statusCode": 422,
        "message": "The WhatsApp channel answered that the message failed.",
        "channel_error": {
            "code": None,
            "type": "message_failed",
            "message": "The WhatsApp channel answered that the message failed.",
            "details": f"message id {WAM_ID}",
            "fbtrace_id": None,
        },
    }
    [chat] = Chat.objects.all()
    assert (chat.status, chat.wam_id) == ("failed", WAM_ID)
    retried = post(api, "failed")
    assert retried.status_code == 422 and retried["Idempotent-Replayed"] == "true"
    assert len(graph.requests) == 1

    # The message kept its id, so WhatsApp's later status update about it finds it.
    set_channel(cloud_org, app_secret=APP_SECRET)
    reason = {"code": 131026, "title": "Message undeliverable"}
    update = status(WAM_ID, "failed", 1_700_000_000, errors=[reason])
    assert deliver(cloud_org, envelope(statuses(update))).status_code == 200
    assert ChatStatusEvent.objects.get().chat_id == chat.pk


def test_a_failed_message_status_with_an_earlier_messages_id_is_still_one_failed_chat(
    api, cloud_org, graph
):
    graph.reply(**accepted())
    graph.reply(**accepted(messages=[{"id": WAM_ID, "message_status": "failed"}]))
    assert post(api, "first").status_code == 200

    response = post(api, "second")

    assert response.status_code == 422
    first, second = Chat.objects.order_by("id")
    assert (first.status, first.wam_id) == ("accepted", WAM_ID)
    assert (second.status, second.wam_id) == ("failed", None)
    assert second.error_details["details"] == f"message id {WAM_ID}"
