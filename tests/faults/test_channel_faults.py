"""The Cloud API misbehaving: every fault is an honest error status, exactly one
`failed` chat, a consistent contact, and the next send goes through.

tests/sending/test_send.py pins the error bodies of a reset, a slow answer, a
non-JSON 200 and a 200 without a message id for text sends; this file adds the
socket-level faults, the rate limits, templates, and what happens after a fault.
"""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from contacts.models import Contact
from devtools.cloud_api_server import graph_error
from sending.models import Chat
from tests.factories import ContactFactory

PHONE = "+4915123456789"
DIGITS = "4915123456789"
SUCCESS = {
    "messaging_product": "whatsapp",
    "contacts": [{"input": DIGITS, "wa_id": DIGITS}],
    "messages": [{"id": "wamid.AFTERFAULT"}],
}


def send(api, endpoint: str):
    if endpoint == "text":
        return api.post("/api/send", {"phone": PHONE, "message": "Hello"}, format="json")
    template = {"name": "hello_world", "language": {"code": "en_US"}}
    return api.post("/api/send/template", {"phone": PHONE, "template": template}, format="json")


FAULTS = [
    # (how the stand-in misbehaves, API status, channel_error.type, channel_error.code)
    pytest.param({"hang_up": True}, 502, "connection_error", None, id="close-without-answer"),
    pytest.param({"reset": True}, 502, "connection_error", None, id="reset-mid-request"),
    pytest.param({"delay": 1.5}, 504, "timeout", None, id="slower-than-timeout"),
    pytest.param(
        {"json": SUCCESS, "cut_after": 40}, 502, "connection_error", None, id="body-cut-short"
    ),
    pytest.param(
        {"body": json.dumps(SUCCESS).encode()[:40]},
        502,
        "invalid_response",
        None,
        id="truncated-json",
    ),
    pytest.param(
        {"body": b"<html>OK</html>", "content_type": "text/html"},
        502,
        "invalid_response",
        None,
        id="html-200",
    ),
    pytest.param(
        {"json": {"messaging_product": "whatsapp", "messages": [{"status": "ok"}]}},
        502,
        "invalid_response",
        None,
        id="no-message-id",
    ),
    pytest.param({"json": [SUCCESS]}, 502, "invalid_response", None, id="json-array"),
    pytest.param(
        {"status": 429, "body": b"Too Many Requests", "content_type": "text/plain"},
        502,
        "http_error",
        None,
        id="http-429-without-graph-error",
    ),
    pytest.param(
        {"status": 429, "json": graph_error(130429, "Rate limit hit")},
        422,
        "OAuthException",
        130429,
        id="graph-130429-throughput",
    ),
    pytest.param(
        {
            "status": 400,
            "json": graph_error(131056, "(Business Account, Consumer Account) pair rate limit hit"),
        },
        422,
        "OAuthException",
        131056,
        id="graph-131056-pair-rate",
    ),
    pytest.param(
        {"status": 503, "json": graph_error(131016, "Service unavailable")},
        502,
        "OAuthException",
        131016,
        id="graph-503",
    ),
]


@pytest.mark.parametrize("endpoint", ["text", "template"])
@pytest.mark.parametrize(("fault", "status", "error_type", "code"), FAULTS)
def test_a_fault_is_an_error_and_one_failed_chat_and_the_next_send_works(
    api, cloud_org, graph, endpoint, fault, status, error_type, code
):
    graph.fault(**fault)

    response = send(api, endpoint)

    assert response.status_code == status, response.content
    body = response.json()
    assert body["statusCode"] == status
    assert (body["channel_error"]["type"], body["channel_error"]["code"]) == (error_type, code)
    [chat] = Chat.objects.all()
    assert (chat.status, chat.wam_id, chat.error_code) == ("failed", None, code)
    [contact] = Contact.objects.all()
    assert (contact.phone, contact.deleted_at) == (DIGITS, None)
    assert chat.contact_id == contact.pk

    # The stand-in is healthy again: the next send goes through on the same contact.
    again = send(api, endpoint)

    assert again.status_code == 200, again.content
    sent = Chat.objects.exclude(pk=chat.pk).get()
    assert sent.wam_id == again.json()["data"]["data"]["messages"][0]["id"]
    assert sent.status == "accepted"
    assert sent.contact_id == contact.pk
    assert Contact.objects.count() == 1
    assert Chat.objects.filter(status="failed").count() == 1


def test_a_fault_leaves_an_existing_contact_as_it_was(api, cloud_org, graph):
    contact = ContactFactory(organization=cloud_org, phone=DIGITS, first_name="Ada")
    before = Contact.objects.values().get(pk=contact.pk)
    graph.fault(reset=True)

    assert send(api, "text").status_code == 502

    assert list(Contact.objects.values()) == [before]
    assert Chat.objects.get().contact_id == contact.pk


def test_the_failed_chat_is_what_the_api_lists(api, cloud_org, graph):
    graph.fault(hang_up=True)
    send(api, "text")

    [listed] = api.get("/api/chats?status=failed").json()["data"]

    assert listed["wam_id"] is None
    assert listed["error"]["details"]["type"] == "connection_error"
    assert api.get("/api/chats?status=accepted").json()["data"] == []


@pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="the in-memory SQLite test database fails concurrent writers with 'table is locked'",
)
@pytest.mark.django_db(transaction=True)
def test_faults_among_concurrent_sends_are_counted_exactly(api, cloud_org, graph):
    # Every other answer is a fault; the others succeed. Whatever the interleaving,
    # each 200 is one accepted chat with the channel's id and each error one failed chat.
    for index in range(12):
        if index % 2:
            graph.fault(reset=True)
        else:
            graph.fault(json={**SUCCESS, "messages": [{"id": f"wamid.OK{index}"}]})

    def one(_):
        try:
            return send(api, "text").status_code
        finally:
            connection.close()  # this thread's own connection; the test database is dropped later

    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(one, range(12)))

    assert sorted(statuses) == [200] * 6 + [502] * 6
    assert Chat.objects.filter(status="accepted").count() == 6
    assert set(Chat.objects.filter(status="accepted").values_list("wam_id", flat=True)) == {
        f"wamid.OK{index}" for index in range(0, 12, 2)
    }
    assert Chat.objects.filter(status="failed", wam_id=None).count() == 6
    assert Contact.objects.filter(phone=DIGITS).count() == 1
