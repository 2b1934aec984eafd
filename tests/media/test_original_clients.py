"""Requests as the original product's clients send them (): lenient
media sends, an uploaded media id, replies (`reply_to`) and `preview_url`. The Cloud API
stand-in (devtools/cloud_api_server.py) records what reached it."""

import pytest

from sending.models import Chat
from sending.services.routing import REPLY_TO_INVALID, REPLY_TO_UNKNOWN, REPLY_TO_WITHOUT_ID
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db

PHONE = "+14155552671"
TEMPLATE = {"name": "order_update", "language": {"code": "en_US"}}


def media(**values):
    return {
        "phone": PHONE,
        "media_type": "image",
        "media_url": "https://example.com/a.jpg",
        **values,
    }


@pytest.mark.parametrize(
    ("kind", "sent"),
    [
        ("image", {"caption": "Menu"}),
        ("video", {"caption": "Menu"}),
        ("document", {"caption": "Menu", "filename": "menu.pdf"}),
        ("audio", {}),
        ("sticker", {}),
    ],
)
def test_caption_and_file_name_are_taken_for_every_type(api, cloud_org, graph, kind, sent):
    body = media(media_type=kind, caption="Menu", file_name="menu.pdf")
    response = api.post("/api/send/media", body, format="json")
    assert response.status_code == 200, response.json()
    [request] = graph.requests
    assert request.json[kind] == {"link": "https://example.com/a.jpg", **sent}


def test_an_uploaded_media_id_replaces_the_url(api, cloud_org, graph):
    body = {
        "phone": PHONE,
        "media_type": "document",
        "id": "1037543291543636",
        "file_name": "a.pdf",
    }
    assert api.post("/api/send/media", body, format="json").status_code == 200
    [request] = graph.requests
    assert request.json["document"] == {"id": "1037543291543636", "filename": "a.pdf"}
    chat = Chat.objects.get()
    assert chat.metadata["document"]["id"] == "1037543291543636"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"media_url": None}, "media_url"),
        ({"id": "123"}, "id"),  # both
        ({"media_url": None, "id": "not an id!"}, "id"),
    ],
)
def test_a_media_send_needs_one_url_or_id(api, cloud_org, graph, body, field):
    response = api.post("/api/send/media", media(**body), format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert graph.requests == []


def sends(api, reply_to):
    return [
        ("/api/send", {"phone": PHONE, "message": "Yes", "reply_to": reply_to}),
        ("/api/send/media", media(reply_to=reply_to)),
        ("/api/send/template", {"phone": PHONE, "template": TEMPLATE, "reply_to": reply_to}),
    ]


def test_reply_to_a_chat_uuid_on_every_send(api, cloud_org, graph):
    inbound = ChatFactory(organization=cloud_org, wam_id="wamid.ASKED", type="inbound")
    for path, body in sends(api, str(inbound.uuid)):
        response = api.post(path, body, format="json")
        assert response.status_code == 200, (path, response.json())
    assert [r.json["context"] for r in graph.requests] == [{"message_id": "wamid.ASKED"}] * 3
    assert all(
        chat.metadata["context"] == {"message_id": "wamid.ASKED"}
        for chat in Chat.objects.filter(type="outbound")
    )


def test_reply_to_a_whatsapp_message_id(api, cloud_org, graph):
    wam_id = "wamid.HBgLMTQxNTU1NTI2NzEVAgASGBQzQUI2RDc0OTNEOEQ2QjU0NjVGOQA="
    response = api.post(
        "/api/send", {"phone": PHONE, "message": "Yes", "reply_to": wam_id}, format="json"
    )
    assert response.status_code == 200
    assert graph.requests[0].json["context"] == {"message_id": wam_id}


def test_without_reply_to_there_is_no_context(api, cloud_org, graph):
    api.post("/api/send", {"phone": PHONE, "message": "Hi", "reply_to": ""}, format="json")
    assert "context" not in graph.requests[0].json


def test_another_organizations_chat_is_a_400_and_nothing_is_sent(api, cloud_org, graph, org_b):
    theirs = ChatFactory(organization=org_b, wam_id="wamid.THEIRS")
    for path, body in sends(api, str(theirs.uuid)):
        response = api.post(path, body, format="json")
        assert response.status_code == 400
        assert response.json()["errors"] == {"reply_to": [REPLY_TO_UNKNOWN]}
    assert graph.requests == []


def test_a_chat_without_a_message_id_or_an_unreadable_id_is_a_400(api, cloud_org, graph):
    failed = ChatFactory(organization=cloud_org, wam_id="", status="failed")
    response = api.post(
        "/api/send", {"phone": PHONE, "message": "Yes", "reply_to": str(failed.uuid)}, format="json"
    )
    assert response.json()["errors"] == {"reply_to": [REPLY_TO_WITHOUT_ID]}
    response = api.post(
        "/api/send", {"phone": PHONE, "message": "Yes", "reply_to": "two words"}, format="json"
    )
    assert response.json()["errors"] == {"reply_to": [REPLY_TO_INVALID]}
    assert graph.requests == []


@pytest.mark.parametrize(("given", "sent"), [({}, True), ({"preview_url": False}, False)])
def test_preview_url(api, cloud_org, graph, given, sent):
    body = {"phone": PHONE, "message": "See https://example.com", **given}
    assert api.post("/api/send", body, format="json").status_code == 200
    assert graph.requests[0].json["text"] == {"preview_url": sent, "body": body["message"]}


def test_preview_url_in_a_form_body(api, cloud_org, graph):
    body = "phone=%2B14155552671&message=See+https%3A%2F%2Fexample.com&preview_url=0"
    response = api.generic(
        "POST", "/api/send", body, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 200
    assert graph.requests[0].json["text"]["preview_url"] is False
