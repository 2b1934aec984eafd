"""Canned replies that answer with an image, audio, document or video: the URL checked as
for POST /api/send/media, and a match sends a media message by link."""

import json

import pytest
from django.urls import reverse

from canned_replies import services as reply_services
from canned_replies.models import CannedReply
from sending.models import AutoReply, Chat
from tests.background import run_tasks
from tests.inbound.conftest import deliver, envelope, text_message
from tests.tasks.conftest import sends

MENU = "https://cdn.example.com/menu.pdf"


def reply_body(**changes) -> dict:
    return {
        "name": "Menu",
        "trigger": "menu",
        "match_criteria": "contains",
        "response_type": "document",
        "response": MENU,
        **changes,
    }


@pytest.mark.parametrize("kind", ["image", "audio", "document", "video"])
def test_a_media_reply_is_stored_with_its_url(api, kind):
    response = api.post("/api/canned-replies", reply_body(response_type=kind), format="json")

    assert response.status_code == 200, response.json()
    reply = CannedReply.objects.get()
    assert reply.metadata == {"type": kind, "data": {"link": MENU}}
    listed = api.get("/api/canned-replies").json()["data"][0]
    assert json.loads(listed["metadata"]) == {"type": kind, "data": {"link": MENU}}


@pytest.mark.parametrize(
    "url",
    [
        "menu.pdf",
        "http://cdn.example.com/menu.pdf",
        "https://127.0.0.1/menu.pdf",
        "https://192.168.1.4/menu.pdf",
        "ftp://cdn.example.com/menu.pdf",
    ],
)
def test_a_media_reply_needs_a_public_https_url(api, url):
    response = api.post("/api/canned-replies", reply_body(response=url), format="json")

    assert response.status_code == 400
    assert "response" in response.json()["errors"]
    assert not CannedReply.objects.exists()


def test_an_unknown_response_type_is_a_400_naming_the_types(api):
    response = api.post("/api/canned-replies", reply_body(response_type="sticker"), format="json")

    assert response.status_code == 400
    assert response.json()["errors"]["response_type"] == [
        "The response type must be one of: text, image, audio, document, video, interactive."
    ]


def test_switching_a_text_reply_to_media_checks_its_stored_text(api, org_a):
    reply = reply_services.create_canned_reply(
        organization=org_a, name="Hi", trigger="hi", match_criteria="contains", response="Hello!"
    )

    response = api.patch(
        f"/api/canned-replies/{reply.uuid}", {"response_type": "image"}, format="json"
    )

    assert response.status_code == 400
    assert "response" in response.json()["errors"]
    reply.refresh_from_db()
    assert reply.metadata == {"type": "text", "data": {"text": "Hello!"}}

    response = api.patch(
        f"/api/canned-replies/{reply.uuid}",
        {"response_type": "image", "response": "https://cdn.example.com/hi.png"},
        format="json",
    )
    assert response.status_code == 200
    reply.refresh_from_db()
    assert reply.metadata == {"type": "image", "data": {"link": "https://cdn.example.com/hi.png"}}


def test_a_match_sends_the_media_message_by_link(cloud_webhook_org, graph):
    reply_services.create_canned_reply(organization=cloud_webhook_org, **reply_body())

    assert deliver(cloud_webhook_org, envelope(text_message("the menu please"))).status_code == 200
    run_tasks()
    owed = AutoReply.objects.get()
    assert (owed.media_type, owed.message) == ("document", MENU)

    [sent] = sends(graph)
    assert sent.json == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "14155552671",
        "type": "document",
        "document": {"link": MENU},
        "biz_opaque_callback_data": f"chat:{Chat.objects.get(type='outbound').uuid}",
    }
    owed.refresh_from_db()
    assert owed.state == "sent"
    assert owed.reply == Chat.objects.get(type="outbound")
    assert owed.reply.metadata == {"type": "document", "document": {"link": MENU}}


def test_a_text_reply_still_sends_text(cloud_webhook_org, graph):
    reply_services.create_canned_reply(
        organization=cloud_webhook_org, **reply_body(response_type="text", response="Soup.")
    )

    deliver(cloud_webhook_org, envelope(text_message("menu")))
    run_tasks()

    assert [r.json["text"]["body"] for r in sends(graph)] == ["Soup."]


ADD = reverse("admin:canned_replies_cannedreply_add")


def test_the_admin_form_offers_the_media_types_and_checks_the_url(admin_a):
    form = admin_a.get(ADD).context["adminform"].form
    assert [value for value, _ in form.fields["response_type"].choices] == [
        "text",
        "image",
        "audio",
        "document",
        "video",
        "interactive",
    ]

    refused = admin_a.post(ADD, reply_body(response="https://10.1.2.3/menu.pdf"))
    assert refused.status_code == 200
    assert "response" in refused.context["adminform"].form.errors
    assert not CannedReply.objects.exists()

    assert admin_a.post(ADD, reply_body()).status_code == 302
    reply = CannedReply.objects.get()
    assert reply.metadata == {"type": "document", "data": {"link": MENU}}
    change = reverse("admin:canned_replies_cannedreply_change", args=[reply.pk])
    assert MENU in admin_a.get(change).text
