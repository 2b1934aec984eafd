"""WhatsApp's limits are checked before anything leaves: each bad request is a 400 that
sends nothing, records no chat and creates no contact."""

import pytest

from business_numbers.gateway import sandbox
from contacts.models import Contact
from sending.models import Chat

PHONE = "+4915123456789"


def button(n: int, **overrides) -> dict:
    return {"id": f"id-{n}", "title": f"Title {n}", **overrides}


INVALID_SENDS = [
    pytest.param({"message": None}, "message", id="message-null"),
    pytest.param({"message": ""}, "message", id="message-blank"),
    pytest.param({"message": "   "}, "message", id="message-whitespace"),
    pytest.param({"message": 42}, "message", id="message-number"),
    pytest.param({"message": "x" * 4097}, "message", id="text-body-4097"),
    pytest.param(
        {"message": "x" * 1025, "buttons": [button(1)]}, "message", id="interactive-body-1025"
    ),
    pytest.param({"header": "h" * 61, "buttons": [button(1)]}, "header", id="header-61"),
    pytest.param({"footer": "f" * 61, "buttons": [button(1)]}, "footer", id="footer-61"),
    pytest.param({"header": "h" * 61}, "header", id="header-61-without-buttons"),
    pytest.param({"buttons": []}, "buttons", id="no-buttons-in-list"),
    pytest.param({"buttons": [button(n) for n in range(4)]}, "buttons", id="four-buttons"),
    pytest.param({"buttons": "yes"}, "buttons", id="buttons-not-a-list"),
    pytest.param({"buttons": [button(1, title="")]}, "buttons.0.title", id="title-empty"),
    pytest.param({"buttons": [button(1, title="t" * 21)]}, "buttons.0.title", id="title-21"),
    pytest.param(
        {"buttons": [button(1), button(2, title="Title 1")]}, "buttons.1.title", id="title-repeated"
    ),
    pytest.param({"buttons": [button(1, id="")]}, "buttons.0.id", id="id-empty"),
    pytest.param({"buttons": [button(1, id="i" * 257)]}, "buttons.0.id", id="id-257"),
    pytest.param(
        {"buttons": [button(1), button(2), button(3, id="id-1")]}, "buttons.2.id", id="id-repeated"
    ),
    pytest.param({"buttons": [{"title": "No id"}]}, "buttons.0.id", id="id-missing"),
    pytest.param({"buttons": [button(1, id=7)]}, "buttons.0.id", id="id-number"),
    pytest.param({"phone": "not a phone"}, "phone", id="phone-garbage"),
    pytest.param({"phone": "+49"}, "phone", id="phone-too-short"),
    pytest.param({"phone": None}, "phone", id="phone-null"),
]


@pytest.mark.parametrize(("changes", "field"), INVALID_SENDS)
def test_invalid_send_is_a_400_that_sends_nothing(api, cloud_org, graph, changes, field):
    body = {"phone": PHONE, "message": "Hello", **changes}

    response = api.post("/api/send", body, format="json")

    assert response.status_code == 400, response.json()
    assert response.json()["message"] == "The given data was invalid."
    assert field in response.json()["errors"], response.json()["errors"]
    assert graph.requests == []
    assert not Chat.objects.exists()
    assert not Contact.objects.exists()


def test_missing_fields_are_named(api, org_a):
    response = api.post("/api/send", {}, format="json")

    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"phone", "message"}
    assert sandbox.sent_messages() == []


def test_the_limits_themselves_are_allowed(api, org_a):
    texts = api.post("/api/send", {"phone": PHONE, "message": "x" * 4096}, format="json")
    buttons = api.post(
        "/api/send",
        {
            "phone": PHONE,
            "message": "x" * 1024,
            "header": "h" * 60,
            "footer": "f" * 60,
            "buttons": [
                {"id": "i" * 256, "title": "t" * 20},
                {"id": "b", "title": "B"},
                {"id": "c", "title": "C"},
            ],
        },
        format="json",
    )

    assert texts.status_code == 200, texts.json()
    assert buttons.status_code == 200, buttons.json()
    assert len(sandbox.sent_messages()) == 2


def test_blank_header_and_footer_count_as_absent(api, org_a):
    response = api.post(
        "/api/send", {"phone": PHONE, "message": "Hi", "header": "", "footer": None}, format="json"
    )

    assert response.status_code == 200
    assert sandbox.sent_messages()[0].payload["type"] == "text"


INVALID_TEMPLATES = [
    pytest.param({}, "template", id="template-missing"),
    pytest.param({"template": "hello_world"}, "template.non_field_errors", id="template-string"),
    pytest.param({"template": {"language": {"code": "en_US"}}}, "template.name", id="no-name"),
    pytest.param({"template": {"name": "hello_world"}}, "template.language", id="no-language"),
    pytest.param(
        {"template": {"name": "hello_world", "language": {}}},
        "template.language.code",
        id="no-language-code",
    ),
    pytest.param(
        {"template": {"name": "hello_world", "language": {"code": "english"}}},
        "template.language.code",
        id="bad-language-code",
    ),
    pytest.param(
        {"template": {"name": "t", "language": {"code": "en"}, "components": {"type": "body"}}},
        "template.components",
        id="components-not-a-list",
    ),
    pytest.param(
        {"template": {"name": "t", "language": {"code": "en"}, "components": [{"parameters": []}]}},
        "template.components.0.type",
        id="component-without-type",
    ),
    pytest.param(
        {
            "template": {
                "name": "t",
                "language": {"code": "en"},
                "components": [{"type": "body", "parameters": [{"type": "text"}]}],
            }
        },
        "template.components.0.parameters.0.text",
        id="text-parameter-without-text",
    ),
    pytest.param(
        {
            "template": {
                "name": "t",
                "language": {"code": "en"},
                "components": [{"type": "body", "parameters": ["Ada"]}],
            }
        },
        "template.components.0.parameters.0.type",
        id="parameter-not-an-object",
    ),
]


@pytest.mark.parametrize(("body", "field"), INVALID_TEMPLATES)
def test_invalid_template_send_is_a_400_that_sends_nothing(api, cloud_org, graph, body, field):
    response = api.post("/api/send/template", {"phone": PHONE, **body}, format="json")

    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()["errors"]
    assert graph.requests == []
    assert not Chat.objects.exists()
    assert not Contact.objects.exists()
