"""POST /api/send/interactive, /reaction, /location and /contacts: WhatsApp's
limits at their edges, checked before any call; what the loopback Cloud API receives;
what the chat keeps."""

import json

import pytest

from business_numbers.models import Number
from sending.models import Chat, ChatType
from tests.factories import ContactFactory, create_chat

PHONE = "+49 151 23456789"
DIGITS = "4915123456789"


def buttons(count: int, title_length: int = 5, id_length: int = 4) -> list[dict]:
    return [
        {
            "type": "reply",
            "reply": {"id": f"{i}".rjust(id_length, "b"), "title": f"{i}".rjust(title_length, "t")},
        }
        for i in range(count)
    ]


def button_message(**changes) -> dict:
    interactive = {
        "type": "button",
        "body": {"text": "Pick one"},
        "action": {"buttons": buttons(2)},
    }
    interactive.update(changes)
    return interactive


def list_message(rows_per_section: list[int], **row) -> dict:
    count = iter(range(100))
    return {
        "type": "list",
        "body": {"text": "Our menu"},
        "action": {
            "button": "See options",
            "sections": [
                {
                    "title": f"Section {index}",
                    "rows": [
                        {"id": f"row-{next(count)}", "title": "A row", **row} for _ in range(size)
                    ],
                }
                for index, size in enumerate(rows_per_section)
            ],
        },
    }


def send(api, interactive, **body):
    return api.post(
        "/api/send/interactive",
        {"phone": PHONE, "interactive": interactive, **body},
        format="json",
    )


def accepted(response, graph) -> dict:
    assert response.status_code == 200, response.json()
    [request] = graph.requests
    return request.json


def refused(response, graph, field: str) -> None:
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()["errors"]
    assert graph.requests == []
    assert not Chat.objects.exists()


def test_a_button_message_reaches_the_cloud_api_exactly(api, cloud_org, graph):
    interactive = button_message(
        header={"type": "text", "text": "Delivery"}, footer={"text": "Acme Shop"}
    )
    payload = accepted(send(api, interactive), graph)
    chat = Chat.objects.get()
    assert payload == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": DIGITS,
        "type": "interactive",
        "interactive": interactive,
        "biz_opaque_callback_data": f"chat:{chat.uuid}",
    }
    assert chat.metadata["interactive"] == interactive
    assert chat.metadata["text"] == {
        "header": "Delivery",
        "body": "Pick one",
        "footer": "Acme Shop",
    }
    assert chat.metadata["buttons"] == [
        {"type": "reply", "text": "tttt0", "value": "bbb0"},
        {"type": "reply", "text": "tttt1", "value": "bbb1"},
    ]


@pytest.mark.parametrize(
    "interactive, field",
    [
        (button_message(action={"buttons": buttons(3)}), None),
        (button_message(action={"buttons": buttons(4)}), "interactive.action.buttons"),
        (button_message(action={"buttons": []}), "interactive.action.buttons"),
        (button_message(action={"buttons": buttons(1, title_length=20)}), None),
        (
            button_message(action={"buttons": buttons(1, title_length=21)}),
            "interactive.action.buttons.0.reply.title",
        ),
        (button_message(action={"buttons": buttons(1, id_length=256)}), None),
        (
            button_message(action={"buttons": buttons(1, id_length=257)}),
            "interactive.action.buttons.0.reply.id",
        ),
        (button_message(body={"text": "x" * 1024}), None),
        (button_message(body={"text": "x" * 1025}), "interactive.body.text"),
        (button_message(header={"type": "text", "text": "h" * 60}), None),
        (button_message(header={"type": "text", "text": "h" * 61}), "interactive.header.text"),
        (button_message(footer={"text": "f" * 60}), None),
        (button_message(footer={"text": "f" * 61}), "interactive.footer.text"),
        (list_message([10]), None),
        (list_message([6, 5]), "interactive.action.sections"),
        (list_message([1] * 10), None),
        (list_message([1] * 11), "interactive.action.sections"),
        (list_message([1], title="r" * 24), None),
        (list_message([1], title="r" * 25), "interactive.action.sections.0.rows.0.title"),
        (list_message([1], description="d" * 72), None),
        (
            list_message([1], description="d" * 73),
            "interactive.action.sections.0.rows.0.description",
        ),
        ({"type": "carousel", "body": {"text": "x"}, "action": {}}, "interactive.type"),
    ],
)
def test_every_limit_at_its_edge(api, cloud_org, graph, interactive, field):
    response = send(api, interactive)
    if field is None:
        assert accepted(response, graph)["interactive"] == interactive
    else:
        refused(response, graph, field)


@pytest.mark.parametrize("length, ok", [(20, True), (21, False)])
def test_a_lists_button_text(api, cloud_org, graph, length, ok):
    interactive = list_message([2])
    interactive["action"]["button"] = "b" * length
    response = send(api, interactive)
    if ok:
        accepted(response, graph)
    else:
        refused(response, graph, "interactive.action.button")


def test_duplicate_ids_and_titles_are_named(api, cloud_org, graph):
    twice = [
        {"type": "reply", "reply": {"id": "same", "title": "One"}},
        {"type": "reply", "reply": {"id": "same", "title": "One"}},
    ]
    refused(
        send(api, button_message(action={"buttons": twice})),
        graph,
        "interactive.action.buttons.1.reply.id",
    )
    assert (
        "interactive.action.buttons.1.reply.title"
        in send(api, button_message(action={"buttons": twice})).json()["errors"]
    )
    rows = list_message([2])
    rows["action"]["sections"][0]["rows"][1]["id"] = "row-0"
    refused(send(api, rows), graph, "interactive.action.sections.0.rows.1.id")


def cta(display_text: str, url: str) -> dict:
    return {
        "type": "cta_url",
        "body": {"text": "See our catalogue"},
        "action": {"name": "cta_url", "parameters": {"display_text": display_text, "url": url}},
    }


@pytest.mark.parametrize(
    "interactive, field",
    [
        (cta("d" * 20, "https://example.com/catalogue"), None),
        (
            cta("d" * 21, "https://example.com/catalogue"),
            "interactive.action.parameters.display_text",
        ),
        (cta("Open", "ftp://example.com/"), "interactive.action.parameters.url"),
        (
            {
                "type": "location_request_message",
                "body": {"text": "Where should we deliver?"},
                "action": {"name": "send_location"},
            },
            None,
        ),
        (
            {
                "type": "flow",
                "body": {"text": "Book a table"},
                "action": {
                    "name": "flow",
                    "parameters": {
                        "flow_message_version": "3",
                        "flow_id": "1234567890",
                        "flow_cta": "Book",
                    },
                },
            },
            None,
        ),
        (
            {
                "type": "flow",
                "body": {"text": "Book"},
                "action": {"name": "flow", "parameters": {}},
            },
            "interactive.action.parameters.flow_cta",
        ),
    ],
)
def test_url_buttons_location_requests_and_flows(api, cloud_org, graph, interactive, field):
    response = send(api, interactive)
    if field is None:
        assert accepted(response, graph)["interactive"] == interactive
    else:
        refused(response, graph, field)


def test_not_an_object_is_a_400(api, cloud_org, graph):
    refused(send(api, "buttons please"), graph, "interactive")


def test_from_and_reply_to_as_every_send(api, cloud_org, graph):
    contact = ContactFactory(organization=cloud_org, phone=DIGITS)
    number = Number.objects.default_for(cloud_org)
    inbound = create_chat(
        organization=cloud_org, contact=contact, wam_id="wamid.CUSTOMER", type=ChatType.INBOUND
    )
    payload = accepted(
        send(api, button_message(), reply_to=str(inbound.uuid), **{"from": str(number.uuid)}),
        graph,
    )
    assert payload["context"] == {"message_id": "wamid.CUSTOMER"}
    chat = Chat.objects.get(type=ChatType.OUTBOUND)
    assert chat.number == number
    assert chat.metadata["context"] == {"message_id": "wamid.CUSTOMER"}
    response = send(api, button_message(), **{"from": "nobody"})
    assert response.status_code == 400 and "from" in response.json()["errors"]


def test_the_answer_has_the_shape_of_api_send(api, cloud_org, graph):
    body = send(api, button_message()).json()
    assert body["statusCode"] == 200 and body["data"]["success"] is True
    sent = body["data"]["data"]
    assert sent["messaging_product"] == "whatsapp"
    assert sent["contacts"] == [{"input": PHONE, "wa_id": DIGITS}]
    assert sent["messages"][0]["id"].startswith("wamid.")
    assert json.loads(sent["chat"]["metadata"])["type"] == "interactive"


def test_a_reaction_names_a_chat_or_a_message_id(api, cloud_org, graph):
    contact = ContactFactory(organization=cloud_org, phone=DIGITS)
    inbound = create_chat(
        organization=cloud_org, contact=contact, wam_id="wamid.LIKED", type=ChatType.INBOUND
    )
    by_uuid = api.post(
        "/api/send/reaction",
        {"phone": PHONE, "message_id": str(inbound.uuid), "emoji": "👍"},
        format="json",
    )
    assert by_uuid.status_code == 200, by_uuid.json()
    by_id = api.post(
        "/api/send/reaction",
        {"phone": PHONE, "message_id": "wamid.LIKED", "emoji": ""},
        format="json",
    )
    assert by_id.status_code == 200, by_id.json()
    first, second = (request.json for request in graph.requests)
    assert first["type"] == "reaction" and first["reaction"] == {
        "message_id": "wamid.LIKED",
        "emoji": "👍",
    }
    assert "context" not in first
    assert second["reaction"] == {"message_id": "wamid.LIKED", "emoji": ""}  # removes it
    kept = Chat.objects.filter(type=ChatType.OUTBOUND).order_by("id").first()
    assert kept.metadata == {"type": "reaction", "reaction": first["reaction"]}


def test_a_reaction_to_an_unknown_chat_is_a_400(api, cloud_org, graph, org_b):
    other = create_chat(
        organization=org_b,
        contact=ContactFactory(organization=org_b),
        wam_id="wamid.OTHER",
        type=ChatType.INBOUND,
    )
    response = api.post(
        "/api/send/reaction",
        {"phone": PHONE, "message_id": str(other.uuid), "emoji": "👍"},
        format="json",
    )
    assert response.status_code == 400 and "message_id" in response.json()["errors"]
    response = api.post(
        "/api/send/reaction",
        {"phone": PHONE, "message_id": "wamid.X", "emoji": "ok"},
        format="json",
    )
    assert response.status_code == 400 and "emoji" in response.json()["errors"]
    assert graph.requests == []


def test_a_location(api, cloud_org, graph):
    response = api.post(
        "/api/send/location",
        {
            "phone": PHONE,
            "latitude": 52.52,
            "longitude": 13.405,
            "name": "Shop",
            "address": "Berlin",
        },
        format="json",
    )
    payload = accepted(response, graph)
    location = {"latitude": 52.52, "longitude": 13.405, "name": "Shop", "address": "Berlin"}
    assert payload["type"] == "location" and payload["location"] == location
    assert Chat.objects.get().metadata == {"type": "location", "location": location}
    response = api.post(
        "/api/send/location", {"phone": PHONE, "latitude": 91, "longitude": 0}, format="json"
    )
    assert response.status_code == 400 and "latitude" in response.json()["errors"]


def test_contact_cards(api, cloud_org, graph):
    card = {
        "name": {"formatted_name": "Ana Lima", "first_name": "Ana"},
        "phones": [{"phone": "+55 11 91234 5678", "type": "CELL", "wa_id": "5511912345678"}],
    }
    payload = accepted(
        api.post("/api/send/contacts", {"phone": PHONE, "contacts": [card]}, format="json"), graph
    )
    assert payload["type"] == "contacts" and payload["contacts"] == [card]
    response = api.post(
        "/api/send/contacts", {"phone": PHONE, "contacts": [{"phones": []}]}, format="json"
    )
    assert response.status_code == 400
    assert "contacts.0.name.formatted_name" in response.json()["errors"]


def test_another_organizations_sandbox_knows_nothing_of_it(api_b, org_b):
    response = api_b.post(
        "/api/send/interactive", {"phone": PHONE, "interactive": button_message()}, format="json"
    )
    assert response.status_code == 200
    assert Chat.objects.get().organization == org_b


def titled(interactive: dict, *titles) -> dict:
    for section, title in zip(interactive["action"]["sections"], titles, strict=True):
        if title is None:
            section.pop("title")
        else:
            section["title"] = title
    return interactive


@pytest.mark.parametrize(
    "interactive, field",
    [
        (titled(list_message([1, 1]), "s" * 24, "Other"), None),
        (titled(list_message([1, 1]), "s" * 25, "Other"), "interactive.action.sections.0.title"),
        (titled(list_message([2]), None), None),  # one section may go without a title
        (titled(list_message([1, 1]), "Pizzas", None), "interactive.action.sections.1.title"),
        (list_message([0]), "interactive.action.sections.0.rows"),
        (list_message([]), "interactive.action.sections"),
        (
            {
                **list_message([1]),
                "header": {"type": "image", "image": {"link": "https://x.io/a.png"}},
            },
            "interactive.header.type",
        ),
        (
            button_message(header={"type": "image", "image": {"link": "https://x.io/a.png"}}),
            None,
        ),
        (
            button_message(header={"type": "image", "image": {"link": "ftp://x.io/a.png"}}),
            "interactive.header.image.link",
        ),
        (
            {
                "type": "location_request_message",
                "header": {"type": "text", "text": "No"},
                "body": {"text": "Where?"},
                "action": {"name": "send_location"},
            },
            "interactive.header",
        ),
        (button_message(body={"text": "   "}), "interactive.body.text"),
    ],
)
def test_sections_and_headers_at_their_edges(api, cloud_org, graph, interactive, field):
    response = send(api, interactive)
    if field is None:
        assert accepted(response, graph)["interactive"] == interactive
    else:
        refused(response, graph, field)


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/send/location", {"latitude": 52.52, "longitude": 13.405}),
        ("/api/send/contacts", {"contacts": [{"name": {"formatted_name": "Ana Lima"}}]}),
    ],
)
def test_a_location_and_contact_cards_take_from_and_reply_to(api, cloud_org, graph, path, body):
    contact = ContactFactory(organization=cloud_org, phone=DIGITS)
    number = Number.objects.default_for(cloud_org)
    inbound = create_chat(
        organization=cloud_org, contact=contact, wam_id="wamid.ASKED", type=ChatType.INBOUND
    )
    response = api.post(
        path,
        {"phone": PHONE, **body, "reply_to": str(inbound.uuid), "from": str(number.uuid)},
        format="json",
    )
    payload = accepted(response, graph)
    assert payload["context"] == {"message_id": "wamid.ASKED"}
    chat = Chat.objects.get(type=ChatType.OUTBOUND)
    assert (chat.number, chat.metadata["context"]) == (number, {"message_id": "wamid.ASKED"})
    answer = response.json()
    assert answer["statusCode"] == 200 and answer["data"]["data"]["chat"]["uuid"] == str(chat.uuid)
