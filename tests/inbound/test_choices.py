"""What customers tap, from real payloads (tests/inbound/payloads: pywa's button, list and
Flow fixtures, netflie's template button): the message passes through unchanged, and
its `choice` keeps the id (or payload) and title, a Flow's answers parsed."""

import json
from pathlib import Path

import pytest
from django.urls import reverse

from accounts.services import create_staff_user
from sending.models import Chat
from tests.admin.conftest import PASSWORD, logged_in
from tests.channel import set_channel
from tests.inbound.conftest import APP_SECRET, deliver

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).parent / "payloads"


def real(file: str, name: str) -> dict:
    document = json.loads((PAYLOADS / file).read_text())
    assert document["_source"]
    return document["payloads"][name]


def received(org, payload: dict) -> tuple[Chat, dict]:
    value = payload["entry"][0]["changes"][0]["value"]
    set_channel(org, app_secret=APP_SECRET, phone_number_id=value["metadata"]["phone_number_id"])
    response = deliver(org, payload)
    assert response.status_code == 200
    assert response.json()["processed"]["skipped"] == 0
    [message] = value["messages"]
    chat = Chat.objects.get(wam_id=message["id"])
    # Everything WhatsApp sent is kept as it came.
    assert chat.metadata[message["type"]] == message[message["type"]]
    assert chat.metadata["context"] == message["context"]
    return chat, message


def test_a_tapped_reply_button(org_a):
    chat, _ = received(org_a, real("pywa_buttons.json", "button_reply"))
    assert chat.metadata["choice"] == {
        "type": "button_reply",
        "id": "callback_data",
        "title": "title",
    }
    assert chat.metadata["text"]["body"] == "title"


def test_a_chosen_list_row(org_a):
    chat, _ = received(org_a, real("pywa_interactive.json", "list_reply"))
    assert chat.metadata["choice"] == {
        "type": "list_reply",
        "id": "callback_data",
        "title": "title",
        "description": "description",
    }


def test_a_template_quick_reply_button(org_a):
    chat, _ = received(org_a, real("pywa_buttons.json", "quick_reply"))
    assert chat.metadata["choice"] == {
        "type": "button",
        "id": "callback_data",
        "payload": "callback_data",
        "title": "title",
    }


def test_a_flow_answer_is_parsed(org_a):
    chat, message = received(org_a, real("pywa_interactive.json", "flow_completion"))
    choice = chat.metadata["choice"]
    assert choice["type"] == "nfm_reply" and choice["title"] == "Sent"
    assert choice["response"] == json.loads(message["interactive"]["nfm_reply"]["response_json"])
    assert choice["response"]["delivery_rating"] == "4"


@pytest.mark.parametrize("fixture", ["flow_completion", "flow_completion_without_flow_token"])
def test_a_flow_answer_is_shown_in_the_inbox_and_on_the_chats_page(org_a, fixture):
    chat, _ = received(org_a, real("pywa_interactive.json", fixture))
    staff = logged_in(create_staff_user(username="maria", organization=org_a, password=PASSWORD))

    inbox = staff.get(f"/admin/inbox/{chat.conversation.uuid}/")
    assert inbox.status_code == 200
    text = inbox.content.decode()
    assert "Flow answers" in text
    assert "delivery_rating: 4" in text and "comment_text: Comment Text" in text
    assert "flow_token" not in text.split('id="message-')[1]  # the business's own marker
    page = staff.get(reverse("admin:sending_chat_change", args=[chat.pk])).content.decode()
    assert "<code>delivery_rating</code></td><td>4</td>" in page
    assert "<code>recommend_radio</code></td><td>0</td>" in page


def test_netflies_template_button(org_a):
    payload = real("netflie.json", "button_with_context_and_referral")
    value = payload["entry"][0]["changes"][0]["value"]
    chat, message = received(org_a, payload)
    assert chat.metadata["choice"]["payload"] == message["button"]["payload"]
    assert chat.metadata["choice"]["title"] == message["button"]["text"]
    assert value["messages"][0]["referral"] == chat.metadata["referral"]
