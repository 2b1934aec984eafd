"""Templates written here: WhatsApp's rules checked first (400, no call), then the
template submitted to the loopback Cloud API's business management API, approved by
its status webhook, sent, edited and deleted there and here; WhatsApp's refusal a 422."""

import copy

import pytest

from business_numbers.models import MessageTemplate
from business_numbers.services import sync_templates
from devtools.cloud_api_server import graph_error
from sending.models import Chat
from tests.account_news.conftest import payload
from tests.channel import BUSINESS_ACCOUNT_ID, set_channel
from tests.inbound.conftest import APP_SECRET, deliver

pytestmark = pytest.mark.django_db

TEMPLATES_PATH = f"/v21.0/{BUSINESS_ACCOUNT_ID}/message_templates"


def body_component(text="Hello {{1}}, your order {{2}} is ready.", examples=("Ada", "1234")):
    component = {"type": "BODY", "text": text}
    if examples is not None:
        component["example"] = {"body_text": [list(examples)]}
    return component


def template(**changes) -> dict:
    written = {
        "name": "order_ready",
        "language": "en_US",
        "category": "UTILITY",
        "components": [
            {
                "type": "HEADER",
                "format": "TEXT",
                "text": "Order {{1}}",
                "example": {"header_text": ["1234"]},
            },
            body_component(),
            {"type": "FOOTER", "text": "Acme Shop"},
            {
                "type": "BUTTONS",
                "buttons": [
                    {"type": "QUICK_REPLY", "text": "Thanks"},
                    {
                        "type": "URL",
                        "text": "Track it",
                        "url": "https://example.com/track/{{1}}",
                        "example": ["https://example.com/track/1234"],
                    },
                ],
            },
        ],
    }
    written.update(changes)
    return written


def status_news(template: MessageTemplate, event: str) -> dict:
    """Meta's message_template_status_update (the shape of tests/account_news' real
    payloads), about this template."""
    news = copy.deepcopy(payload("meta_template_status.json", "paused"))
    value = news["entry"][0]["changes"][0]["value"]
    value.update(
        {
            "event": event,
            "message_template_id": int(template.external_id),
            "message_template_name": template.name,
            "message_template_language": template.language.replace("_", "-"),
            "reason": "NONE",
        }
    )
    value.pop("other_info", None)
    return news


def test_submission_approval_send_edit_and_deletion(api, cloud_org, graph):
    set_channel(cloud_org, app_secret=APP_SECRET)
    written = template()
    response = api.post("/api/templates", written, format="json")
    assert response.status_code == 200, response.json()
    stored = MessageTemplate.objects.get(uuid=response.json()["id"])
    [submitted] = graph.requests
    assert (submitted.method, submitted.path) == ("POST", TEMPLATES_PATH)
    assert submitted.json == written
    assert stored.status == "PENDING" and stored.external_id in graph.templates
    shown = api.get(f"/api/templates/{stored.uuid}").json()["data"]
    assert (shown["status"], shown["external_id"]) == ("PENDING", stored.external_id)

    # Not sendable while pending; WhatsApp's webhook approves it.
    send = {
        "phone": "+14155552671",
        "template": {
            "name": "order_ready",
            "language": {"code": "en_US"},
            "components": [
                {"type": "header", "parameters": [{"type": "text", "text": "1234"}]},
                {
                    "type": "body",
                    "parameters": [
                        {"type": "text", "text": "Ada"},
                        {"type": "text", "text": "1234"},
                    ],
                },
            ],
        },
    }
    assert api.post("/api/send/template", send, format="json").status_code == 422
    assert deliver(cloud_org, status_news(stored, "APPROVED")).status_code == 200
    stored.refresh_from_db()
    assert stored.status == "APPROVED"
    sent = api.post("/api/send/template", send, format="json")
    assert sent.status_code == 200, sent.json()
    chat = Chat.objects.get(status="accepted")
    assert chat.metadata["text"]["body"] == "Hello Ada, your order 1234 is ready."

    # An edit goes to WhatsApp by the template's id and waits for its review again.
    edited = template()["components"]
    edited[1] = body_component("Hi {{1}}, order {{2}} is ready for pickup.")
    response = api.put(f"/api/templates/{stored.uuid}", {"components": edited}, format="json")
    assert response.status_code == 200, response.json()
    edit = graph.requests[-1]
    assert (edit.method, edit.path) == ("POST", f"/v21.0/{stored.external_id}")
    assert edit.json == {"components": edited}
    stored.refresh_from_db()
    assert (stored.status, stored.components) == ("PENDING", edited)

    # A deletion goes to WhatsApp by name and id, then here.
    response = api.delete(f"/api/templates/{stored.uuid}")
    assert response.status_code == 200, response.json()
    deletion = graph.requests[-1]
    assert deletion.method == "DELETE"
    assert deletion.path == f"{TEMPLATES_PATH}?name=order_ready&hsm_id={stored.external_id}"
    assert graph.templates == {}
    assert api.get(f"/api/templates/{stored.uuid}").status_code == 404
    # Written again later, the same row comes back with WhatsApp's new id.
    again = api.post("/api/templates", written, format="json")
    assert again.status_code == 200
    assert MessageTemplate.objects.get().external_id != stored.external_id


def test_whatsapps_refusal_is_a_422_with_its_message(api, cloud_org, graph):
    graph.templates["1"] = {"id": "1", "name": "order_ready", "language": "en_US"}
    response = api.post("/api/templates", template(), format="json")
    assert response.status_code == 422, response.json()
    body = response.json()
    assert body["message"] == (
        "There is already en_US content for this template. Create a new template and try again."
    )
    assert body["channel_error"]["code"] == 100
    assert body["channel_error"]["details"]["error_subcode"] == 2388024
    assert not MessageTemplate.objects.exists()


def test_an_edit_or_deletion_whatsapp_refuses_changes_nothing_here(api, cloud_org, graph):
    created = api.post("/api/templates", template(), format="json")
    assert created.status_code == 200, created.json()
    stored = MessageTemplate.objects.get(uuid=created.json()["id"])
    graph.templates.clear()  # deleted in WhatsApp Manager meanwhile

    edited = template()["components"]
    edited[2] = {"type": "FOOTER", "text": "Acme Shop, Berlin"}
    response = api.put(f"/api/templates/{stored.uuid}", {"components": edited}, format="json")
    assert response.status_code == 422, response.json()
    body = response.json()
    assert body["message"].startswith(
        f"Unsupported post request. Object with ID '{stored.external_id}' does not exist"
    )
    assert (body["channel_error"]["code"], body["channel_error"]["type"]) == (
        100,
        "GraphMethodException",
    )
    response = api.delete(f"/api/templates/{stored.uuid}")
    assert response.status_code == 422, response.json()
    body = response.json()
    assert body["message"] == "The message template order_ready wasn't found for this account."
    assert body["channel_error"]["code"] == 100
    assert body["channel_error"]["details"]["error_user_title"] == "Message template not found"

    kept = MessageTemplate.objects.live().get(pk=stored.pk)
    assert (kept.status, kept.components) == (stored.status, stored.components)
    assert api.get(f"/api/templates/{stored.uuid}").status_code == 200


def test_a_channel_failure_changes_nothing(api, cloud_org, graph):
    graph.reply(500, graph_error(1, "An unknown error occurred", type="OAuthException"))
    response = api.post("/api/templates", template(), format="json")
    assert response.status_code == 502
    assert not MessageTemplate.objects.exists()


def rule_breaking(component_index: int | None = None, **changes):
    written = template()
    if component_index is None:
        written.update(changes)
    else:
        written["components"][component_index] = {
            **written["components"][component_index],
            **changes,
        }
    return written


@pytest.mark.parametrize(
    "written, field",
    [
        (rule_breaking(name="Order Ready"), "name"),
        (rule_breaking(name="a" * 513), "name"),
        (rule_breaking(language="english"), "language"),
        (rule_breaking(category="PROMO"), "category"),
        (rule_breaking(components=[{"type": "FOOTER", "text": "x"}]), "components"),
        (rule_breaking(1, text="x" * 1025), "components.1.text"),
        (rule_breaking(1, text="{{1}} {{3}}"), "components.1.text"),
        (rule_breaking(1, text="{{2}} then {{1}}"), "components.1.text"),
        (rule_breaking(1, example={"body_text": [["Ada"]]}), "components.1.example.body_text"),
        (rule_breaking(0, text="h" * 61), "components.0.text"),
        (
            rule_breaking(0, text="{{1}} and {{2}}", example={"header_text": ["a", "b"]}),
            "components.0.text",
        ),
        (rule_breaking(2, text="f" * 61), "components.2.text"),
        (rule_breaking(2, text="Thanks {{1}}"), "components.2.text"),
        (
            rule_breaking(3, buttons=[{"type": "QUICK_REPLY", "text": f"b{i}"} for i in range(11)]),
            "components.3.buttons",
        ),
        (
            rule_breaking(3, buttons=[{"type": "QUICK_REPLY", "text": "b" * 26}]),
            "components.3.buttons.0.text",
        ),
        (
            rule_breaking(3, buttons=[{"type": "URL", "text": "Go", "url": "ftp://x"}]),
            "components.3.buttons.0.url",
        ),
    ],
)
def test_whatsapps_rules_are_checked_before_any_call(api, cloud_org, graph, written, field):
    response = api.post("/api/templates", written, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()["errors"]
    assert graph.requests == []
    assert not MessageTemplate.objects.exists()


@pytest.mark.parametrize(
    "written",
    [
        rule_breaking(name="a" * 512),
        rule_breaking(1, text="x" * 1012 + " {{1}} {{2}}"),
        rule_breaking(0, text="h" * 60, example=None),
        rule_breaking(2, text="f" * 60),
        rule_breaking(3, buttons=[{"type": "QUICK_REPLY", "text": f"b{i}"} for i in range(10)]),
        rule_breaking(3, buttons=[{"type": "QUICK_REPLY", "text": "b" * 25}]),
    ],
)
def test_the_rules_edges_are_accepted(api, cloud_org, graph, written):
    response = api.post("/api/templates", written, format="json")
    assert response.status_code == 200, response.json()


def test_the_sandbox_approves_at_once_and_keeps_them_through_a_sync(api, org_a):
    response = api.post("/api/templates", template(), format="json")
    assert response.status_code == 200, response.json()
    stored = MessageTemplate.objects.get()
    assert stored.status == "APPROVED" and stored.external_id
    sync_templates(number=stored.number)
    assert MessageTemplate.objects.live().filter(pk=stored.pk).exists()
    edit = api.put(f"/api/templates/{stored.uuid}", {"category": "marketing"}, format="json")
    assert edit.status_code == 200
    stored.refresh_from_db()
    assert (stored.category, stored.status) == ("MARKETING", "APPROVED")
    assert api.delete(f"/api/templates/{stored.uuid}").status_code == 200


def test_a_live_template_of_that_name_and_language_is_a_400(api, org_a):
    assert api.post("/api/templates", template(), format="json").status_code == 200
    again = api.post("/api/templates", template(), format="json")
    assert again.status_code == 400 and "name" in again.json()["errors"]


def test_another_organizations_template_is_a_404(api, api_b, org_a):
    created = api.post("/api/templates", template(), format="json").json()["id"]
    assert (
        api_b.put(f"/api/templates/{created}", {"category": "MARKETING"}, format="json").status_code
        == 404
    )
    assert api_b.delete(f"/api/templates/{created}").status_code == 404


def test_an_edit_names_only_what_may_change(api, org_a):
    created = api.post("/api/templates", template(), format="json").json()["id"]
    response = api.put(f"/api/templates/{created}", {"name": "other"}, format="json")
    assert response.status_code == 400 and "name" in response.json()["errors"]
    response = api.put(
        f"/api/templates/{created}", {"components": [body_component(examples=None)]}, format="json"
    )
    assert response.status_code == 400
    assert "components.0.example.body_text" in response.json()["errors"]


def test_an_unknown_number_is_a_400(api, org_a):
    response = api.post("/api/templates", {**template(), "number": "nobody"}, format="json")
    assert response.status_code == 400 and "number" in response.json()["errors"]
