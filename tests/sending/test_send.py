"""POST /api/send: what the channel receives, what the client gets back, what is recorded."""

import json

import pytest
from django.db import connection

from business_numbers.gateway import sandbox
from business_numbers.models import Number
from contacts.models import Contact
from sending.models import Chat
from tests.channel import set_channel
from tests.factories import ContactFactory
from tests.sending.conftest import ACCESS_TOKEN, PHONE_NUMBER_ID

PHONE = "+49 151 23456789"
DIGITS = "4915123456789"


def send(api, **body):
    return api.post("/api/send", {"phone": PHONE, "message": "Hello there", **body}, format="json")


def test_text_message_reaches_the_cloud_api_exactly(api, cloud_org, graph):
    response = send(api, message="Your order has shipped.")

    assert response.status_code == 200, response.json()
    [request] = graph.requests
    assert request.method == "POST"
    assert request.path == f"/v21.0/{PHONE_NUMBER_ID}/messages"
    assert request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.json == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": DIGITS,
        "type": "text",
        "text": {"preview_url": True, "body": "Your order has shipped."},
        # Names the send's chat, so that its status webhooks can settle a lost answer.
        "biz_opaque_callback_data": f"chat:{Chat.objects.get().uuid}",
    }


def test_button_message_carries_header_footer_and_reply_buttons(api, cloud_org, graph):
    response = send(
        api,
        message="Did it arrive?",
        header="Delivery",
        footer="Acme Shop",
        buttons=[{"id": "yes", "title": "Yes"}, {"id": "no", "title": "Not yet"}],
    )

    assert response.status_code == 200, response.json()
    assert graph.requests[0].json == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": DIGITS,
        "type": "interactive",
        "interactive": {
            "type": "button",
            "header": {"type": "text", "text": "Delivery"},
            "body": {"text": "Did it arrive?"},
            "footer": {"text": "Acme Shop"},
            "action": {
                "buttons": [
                    {"type": "reply", "reply": {"id": "yes", "title": "Yes"}},
                    {"type": "reply", "reply": {"id": "no", "title": "Not yet"}},
                ]
            },
        },
        "biz_opaque_callback_data": f"chat:{Chat.objects.get().uuid}",
    }
    metadata = json.loads(response.json()["data"]["data"]["chat"]["metadata"])
    assert metadata == {
        "type": "interactive",
        "text": {"header": "Delivery", "body": "Did it arrive?", "footer": "Acme Shop"},
        "buttons": [
            {"type": "reply", "text": "Yes", "value": "yes"},
            {"type": "reply", "text": "Not yet", "value": "no"},
        ],
    }


def test_buttons_without_header_or_footer_send_neither(api, cloud_org, graph):
    send(api, buttons=[{"id": "1", "title": "OK"}])

    interactive = graph.requests[0].json["interactive"]
    assert list(interactive) == ["type", "body", "action"]


def test_response_has_the_documented_shape(api, org_a):
    response = send(api)

    assert response.status_code == 200
    body = response.json()
    assert body["statusCode"] == 200
    assert body["data"]["success"] is True
    data = body["data"]["data"]
    assert list(data) == ["messaging_product", "contacts", "messages", "chat"]
    assert data["messaging_product"] == "whatsapp"
    assert data["contacts"] == [{"input": PHONE, "wa_id": DIGITS}]
    [message] = data["messages"]
    assert list(message) == ["id"]
    assert message["id"].startswith("wamid.")

    chat = Chat.objects.get()
    contact = Contact.objects.get()
    assert data["chat"] == {
        "id": chat.id,
        "uuid": str(chat.uuid),
        "organization_id": org_a.id,
        "wam_id": message["id"],
        "contact_id": contact.id,
        "type": "outbound",
        "metadata": '{"type":"text","text":{"body":"Hello there"}}',
        "media_id": None,
        "status": "accepted",
        "source": "api",
        "deleted_by": None,
        "deleted_at": None,
        "created_at": chat.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        "sent_at": None,
        "contact": {
            "id": contact.id,
            "uuid": str(contact.uuid),
            "organization_id": org_a.id,
            "first_name": None,
            "last_name": None,
            "phone": DIGITS,
            "email": None,
            "avatar": None,
            "address": None,
            "contact_group_id": None,
            "is_favorite": 0,
            "opted_out": 0,
            "user_id": "",
            "metadata": None,
            "created_by": 0,
            "created_at": contact.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "updated_at": contact.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
            "deleted_at": None,
            "full_name": " ",
            "formatted_phone_number": "+49 1512 3456789",
        },
        "media": None,
    }


def test_status_is_what_the_channel_said_never_delivered(api, cloud_org, graph):
    graph.reply(
        200,
        {
            "messaging_product": "whatsapp",
            "contacts": [{"input": DIGITS, "wa_id": DIGITS}],
            "messages": [{"id": "wamid.HELD", "message_status": "held_for_quality_assessment"}],
        },
    )
    response = send(api)

    assert response.status_code == 200
    assert Chat.objects.get().status == "held_for_quality_assessment"
    send(api)
    assert Chat.objects.order_by("id").last().status == "accepted"


def test_sandbox_keeps_the_message_in_its_outbox(api, org_a):
    response = send(api, message="Hi from the sandbox")

    [sent] = sandbox.sent_messages()
    assert sent.organization_id == org_a.id
    assert sent.payload["text"]["body"] == "Hi from the sandbox"
    assert sent.answer["messages"][0]["id"] == response.json()["data"]["data"]["messages"][0]["id"]


def test_existing_live_contact_is_reused(api, org_a):
    contact = ContactFactory(organization=org_a, phone=DIGITS, first_name="Ada")

    response = send(api)

    assert response.status_code == 200
    assert Contact.objects.count() == 1
    chat = response.json()["data"]["data"]["chat"]
    assert chat["contact_id"] == contact.id
    assert chat["contact"]["first_name"] == "Ada"


def test_a_deleted_contact_is_not_reused(api, org_a):
    ContactFactory(organization=org_a, phone=DIGITS, deleted_at="2024-01-01T00:00:00Z")

    response = send(api)

    assert Contact.objects.live().get().id == response.json()["data"]["data"]["chat"]["contact_id"]


def test_the_same_number_is_a_separate_contact_in_each_organization(api, api_b, org_a, org_b):
    theirs = ContactFactory(organization=org_b, phone=DIGITS)

    first = send(api).json()["data"]["data"]["chat"]
    again = send(api).json()["data"]["data"]["chat"]
    in_b = send(api_b).json()["data"]["data"]["chat"]

    assert first["contact_id"] == again["contact_id"] != theirs.id
    assert in_b["contact_id"] == theirs.id
    assert Contact.objects.filter(organization=org_a).count() == 1
    assert Contact.objects.filter(organization=org_b).count() == 1
    assert Chat.objects.filter(organization=org_a).count() == 2


def test_cloud_api_without_credentials_is_forbidden_and_sends_nothing(api, org_a, graph):
    set_channel(org_a, kind="cloud_api", phone_number_id=PHONE_NUMBER_ID)

    response = send(api)

    assert response.status_code == 403
    assert response.json() == {"statusCode": 403, "message": "Please setup your whatsapp account!"}
    assert graph.requests == []
    assert not Chat.objects.exists()
    assert not Contact.objects.exists()
    assert sandbox.sent_messages() == []


# Failures: every one is an error status, a failed chat, and never a 200.

FAILURES = [
    pytest.param(
        {
            "status": 400,
            "json": {
                "error": {
                    "message": "Re-engagement message",
                    "type": "OAuthException",
                    "code": 131047,
                    "error_data": {
                        "messaging_product": "whatsapp",
                        "details": "Message failed to send because more than 24 hours have "
                        "passed since the customer last replied to this number.",
                    },
                    "fbtrace_id": "A1b2C3d4E5",
                }
            },
        },
        422,
        {
            "code": 131047,
            "type": "OAuthException",
            "message": "Re-engagement message",
            "details": "Message failed to send because more than 24 hours have passed since "
            "the customer last replied to this number.",
            "fbtrace_id": "A1b2C3d4E5",
        },
        id="graph-400-131047",
    ),
    pytest.param(
        {
            "status": 401,
            "json": {
                "error": {
                    "message": "Error validating access token: Session has expired.",
                    "type": "OAuthException",
                    "code": 190,
                    "error_subcode": 463,
                    "fbtrace_id": "Zz9",
                }
            },
        },
        502,
        {
            "code": 190,
            "type": "OAuthException",
            "message": "Error validating access token: Session has expired.",
            "details": None,
            "fbtrace_id": "Zz9",
        },
        id="graph-401-190",
    ),
    pytest.param(
        {"status": 500, "body": b"<html><body>Oops</body></html>", "content_type": "text/html"},
        502,
        {
            "code": None,
            "type": "http_error",
            "message": "The WhatsApp channel answered with HTTP 500.",
            "details": None,
            "fbtrace_id": None,
        },
        id="html-500",
    ),
    pytest.param(
        {"reset": True},
        502,
        {
            "code": None,
            "type": "connection_error",
            "message": "The WhatsApp channel could not be reached.",
            "details": "ConnectionResetError",
            "fbtrace_id": None,
        },
        id="connection-reset",
    ),
    pytest.param(
        {"delay": 1.5},
        504,
        {
            "code": None,
            "type": "timeout",
            "message": "The WhatsApp channel did not answer in time.",
            "details": None,
            "fbtrace_id": None,
        },
        id="slow-answer",
    ),
    pytest.param(
        {"status": 200, "body": b"OK", "content_type": "text/plain"},
        502,
        {
            "code": None,
            "type": "invalid_response",
            "message": "The WhatsApp channel's answer could not be understood.",
            "details": None,
            "fbtrace_id": None,
        },
        id="not-json",
    ),
    *(
        pytest.param(
            {"status": 200, "json": {"messaging_product": "whatsapp", "messages": messages}},
            502,
            {
                "code": None,
                "type": "invalid_response",
                "message": "The WhatsApp channel's answer carried no message id.",
                "details": None,
                "fbtrace_id": None,
            },
            id=f"message-id-{name}",
        )
        for name, messages in [
            ("missing", []),
            ("empty", [{"id": ""}]),
            ("too-long", [{"id": "wamid." + "A" * 250}]),
            ("with-a-space", [{"id": "wamid. x"}]),
            ("a-number", [{"id": 12345}]),
            ("null", [{"id": None}]),
        ]
    ),
]


@pytest.mark.parametrize(("reply", "status", "channel_error"), FAILURES)
def test_channel_failure_is_reported_and_recorded_as_failed(
    api, cloud_org, graph, settings, caplog, reply, status, channel_error
):
    settings.WHATSAPP_TIMEOUT = 0.3
    graph.reply(**reply)

    response = send(api)

    assert response.status_code == status
    body = response.json()
    assert body["statusCode"] == status
    assert body["channel_error"] == channel_error
    assert "success" not in body
    chat = Chat.objects.get()
    assert chat.status == "failed"
    assert chat.wam_id is None
    assert chat.error_code == channel_error["code"]
    assert chat.error_title == channel_error["message"]
    assert chat.error_details["fbtrace_id"] == channel_error["fbtrace_id"]
    assert chat.error_details["details"] == channel_error["details"]
    assert chat.contact.phone == DIGITS
    assert ACCESS_TOKEN not in response.content.decode()
    assert ACCESS_TOKEN not in caplog.text


def test_refusal_answers_with_graphs_own_text(api, cloud_org, graph):
    graph.reply(400, {"error": {"message": "(#131026) Message undeliverable", "code": 131026}})

    response = send(api)

    assert response.status_code == 422
    assert response.json()["message"] == "(#131026) Message undeliverable"


def test_rejected_credentials_say_they_need_attention(api, cloud_org, graph):
    graph.reply(401, {"error": {"message": "Invalid OAuth access token.", "code": 190}})

    response = send(api)

    assert response.status_code == 502
    assert "credentials need attention" in response.json()["message"]


def test_an_unreachable_channel_is_a_502(api, cloud_org, graph, settings):
    graph.stop()  # nothing listens on the port any more

    response = send(api)

    assert response.status_code == 502
    assert response.json()["channel_error"]["type"] == "connection_error"
    assert Chat.objects.get().status == "failed"


def test_failed_chat_shows_its_error_in_the_chat_list(api, cloud_org, graph):
    graph.reply(400, {"error": {"message": "Re-engagement message", "code": 131047}})
    send(api)

    [chat] = api.get("/api/chats").json()["data"]

    assert chat["status"] == "failed"
    assert chat["wam_id"] is None
    assert chat["error"] == {
        "code": 131047,
        "message": "Re-engagement message",
        "details": {"type": None, "details": None, "fbtrace_id": None, "http_status": 400},
    }


def test_an_id_the_channel_gave_before_is_a_failed_send_not_a_500(api, cloud_org, graph):
    graph.reply(json={"messaging_product": "whatsapp", "messages": [{"id": "wamid.SAME"}]})
    graph.reply(json={"messaging_product": "whatsapp", "messages": [{"id": "wamid.SAME"}]})
    assert send(api).status_code == 200

    response = send(api)

    assert response.status_code == 502
    assert response.json()["channel_error"] == {
        "code": None,
        "type": "invalid_response",
        "message": "The WhatsApp channel answered with the message id of an earlier message.",
        "details": "message id wamid.SAME",
        "fbtrace_id": None,
    }
    first, second = Chat.objects.order_by("id")
    assert first.wam_id == "wamid.SAME" and first.status != "failed"
    assert (second.status, second.wam_id) == ("failed", None)
    assert first.contact_id == second.contact_id


# Query counts: the send path must not grow with anything. PostgreSQL takes one more:
# the lock that makes a status posted during the send find its chat (sending/services/statuses.py),
# and SQLite one more: the statements run at the end of the event batch (the
# conversation's time, the day's figures) go one by one (messaging_project/core/database.py).
ON_POSTGRESQL = int(connection.vendor == "postgresql")
ON_SQLITE = 1 - ON_POSTGRESQL


def test_send_to_a_known_contact_makes_a_fixed_number_of_queries(
    api, org_a, django_assert_num_queries
):
    ContactFactory(organization=org_a, phone=DIGITS)
    assert send(api).status_code == 200  # the contact's conversation with the number
    # token; the organization's numbers; the sandbox's templates (gateway_for: the
    # sandbox refuses a template it does not have, as WhatsApp does; a Cloud API number
    # costs nothing here); contact look-up; chat insert in its own savepoint (savepoint,
    # [PostgreSQL: the lock on its id,] its conversation read, insert, the endpoints that
    # want message.sent (none), the statuses kept aside for its id, at the batch's end the
    # conversation's time and the day's figures (analytics) [SQLite: one by one], release):
    # a repeated message id then fails that insert alone
    with django_assert_num_queries(11 + ON_POSTGRESQL + ON_SQLITE):
        response = send(api, buttons=[{"id": "a", "title": "A"}], header="H")
    assert response.status_code == 200


def test_send_to_a_new_number_makes_a_fixed_number_of_queries(
    api, org_a, django_assert_num_queries
):
    Number.objects.default_for(org_a)  # made with the organization's first message
    # token; the organization's numbers; the sandbox's templates (gateway_for); contact
    # look-up; the contact's creation (savepoint, insert, counts, endpoints for
    # contact.created, release); chat insert in its savepoint (savepoint, [PostgreSQL: the
    # lock on its id,] its conversation looked for and made, insert, endpoints for
    # conversation.created and message.sent, the statuses kept aside for its id, at the
    # batch's end the organization's count of conversations (inbox/queries.py) and the
    # day's figures (analytics) [SQLite: one by one], release)
    with django_assert_num_queries(17 + ON_POSTGRESQL + ON_SQLITE):
        response = send(api)
    assert response.status_code == 200


def test_input_echoes_the_number_exactly_as_received(api, org_a):
    response = api.post("/api/send", {"phone": DIGITS, "message": "Hi"}, format="json")

    assert response.json()["data"]["data"]["contacts"] == [{"input": DIGITS, "wa_id": DIGITS}]


def test_the_service_sends_for_callers_without_an_input_number(org_a):
    from sending import services

    result = services.send_message(organization=org_a, phone=DIGITS, message="Auto-reply")

    assert result.phone_input == f"+{DIGITS}"
    assert result.chat.status == "accepted"
    assert sandbox.sent_messages()[0].payload["to"] == DIGITS


# The send service's error: what the channel said, and the failed chat recorded for it.


def answered(message: dict) -> dict:
    return {"json": {"messaging_product": "whatsapp", "messages": [message]}}


REFUSALS = [
    # (answers to earlier sends, the answer to this one, its error's kind and code, chat's id)
    pytest.param(
        [],
        {"status": 400, "json": {"error": {"message": "Re-engagement message", "code": 131047}}},
        ("refused", 131047, None),
        id="graph-refusal",
    ),
    pytest.param(
        [answered({"id": "wamid.SAME"})],
        answered({"id": "wamid.SAME"}),
        ("unavailable", None, None),
        id="an-earlier-messages-id",
    ),
    pytest.param(
        [],
        answered({"id": "wamid.FAILED", "message_status": "failed"}),
        ("refused", None, "wamid.FAILED"),
        id="message-status-failed",
    ),
]


@pytest.mark.parametrize(("earlier", "reply", "expected"), REFUSALS)
def test_a_send_the_channel_did_not_accept_raises_the_failed_chat_it_recorded(
    cloud_org, graph, earlier, reply, expected
):
    from sending import services

    for answer in earlier:
        graph.reply(**answer)
        services.send_message(organization=cloud_org, phone=DIGITS, message="Earlier")
    graph.reply(**reply)

    with pytest.raises(services.SendFailed) as raised:
        services.send_message(organization=cloud_org, phone=DIGITS, message="Hello")

    failure = raised.value
    kind, code, wam_id = expected
    assert (failure.error.kind, failure.error.code) == (kind, code)
    assert failure.chat == Chat.objects.get(status="failed")
    assert (failure.chat.wam_id, failure.chat.error_code) == (wam_id, code)
    assert failure.chat.error_title == failure.error.message == str(failure)
