"""Menus: interactive canned replies (checked when saved), the `button` criterion, comma
triggers, taps matched by title and quick-reply buttons by payload, and placeholders
filled from the contact; driven through the signed webhook and the worker's tasks."""

import json

import pytest

from business_numbers.gateway import sandbox
from canned_replies import services
from canned_replies.matching import find_reply
from contacts.models import ContactGroup
from sending.models import Chat, ChatType
from tests.background import run_tasks
from tests.channel import set_channel
from tests.factories import ContactFactory
from tests.inbound.conftest import APP_SECRET, deliver, envelope, text_message

pytestmark = pytest.mark.django_db(transaction=True)

CUSTOMER = "14155552671"


@pytest.fixture(autouse=True)
def empty_outbox():
    sandbox.clear_outbox()
    yield
    sandbox.clear_outbox()


@pytest.fixture
def webhook_org(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    return org_a


def menu(body: str, *choices: tuple[str, str]) -> dict:
    return {
        "type": "button",
        "body": {"text": body},
        "action": {
            "buttons": [
                {"type": "reply", "reply": {"id": choice_id, "title": title}}
                for choice_id, title in choices
            ]
        },
    }


def canned(org, trigger, criteria="contains", response="answer", response_type="text"):
    if isinstance(response, dict):
        response, response_type = json.dumps(response), "interactive"
    return services.create_canned_reply(
        organization=org,
        name=trigger[:40],
        trigger=trigger,
        match_criteria=criteria,
        response=response,
        response_type=response_type,
    )


def tap(choice_id: str, title: str, *, kind: str = "button_reply") -> dict:
    reply = {"id": choice_id, "title": title}
    return {
        "messaging_product": "whatsapp",
        "contacts": [{"profile": {"name": "Ada"}, "wa_id": CUSTOMER}],
        "messages": [
            {
                "from": CUSTOMER,
                "id": f"wamid.TAP{choice_id}{title}".replace(" ", ""),
                "timestamp": "1700000000",
                "type": "interactive",
                "interactive": {"type": kind, kind: reply},
            }
        ],
    }


def quick_reply(payload: str, text: str) -> dict:
    return {
        "messaging_product": "whatsapp",
        "contacts": [{"profile": {"name": "Ada"}, "wa_id": CUSTOMER}],
        "messages": [
            {
                "from": CUSTOMER,
                "id": f"wamid.QR{payload}{text}".replace(" ", ""),
                "timestamp": "1700000000",
                "type": "button",
                "button": {"payload": payload, "text": text},
            }
        ],
    }


def sent(org) -> list[dict]:
    run_tasks()
    return [message.payload for message in sandbox.sent_messages(org.id)]


def test_a_three_level_menu_through_the_signed_webhook(webhook_org):
    canned(
        webhook_org,
        "menu",
        "exact match",
        menu("How can we help?", ("orders", "Orders"), ("shop", "Shop")),
    )
    canned(
        webhook_org, "orders", "button", menu("Your orders", ("track", "Track"), ("back", "Back"))
    )
    canned(webhook_org, "track", "button", "Your order {first_name} is on its way.")
    canned(webhook_org, "back", "button", menu("How can we help?", ("orders", "Orders")))

    deliver(webhook_org, envelope(text_message("Menu", sender=CUSTOMER, name="Ada")))
    [first] = sent(webhook_org)
    assert first["type"] == "interactive"
    assert first["interactive"]["body"]["text"] == "How can we help?"

    deliver(webhook_org, envelope(tap("orders", "Orders")))
    second = sent(webhook_org)[-1]
    assert second["interactive"]["body"]["text"] == "Your orders"

    deliver(webhook_org, envelope(tap("track", "Track")))
    third = sent(webhook_org)[-1]
    assert third["type"] == "text"
    assert third["text"]["body"] == "Your order Ada is on its way."

    replies = Chat.objects.filter(type=ChatType.OUTBOUND).order_by("id")
    assert [chat.metadata["type"] for chat in replies] == ["interactive", "interactive", "text"]
    assert replies[1].metadata["buttons"] == [
        {"type": "reply", "text": "Track", "value": "track"},
        {"type": "reply", "text": "Back", "value": "back"},
    ]


def test_a_tap_keeps_its_id_and_title(webhook_org):
    deliver(webhook_org, envelope(tap("row-7", "Large pizza", kind="list_reply")))
    deliver(webhook_org, envelope(quick_reply("STOP_PROMOS", "Stop promotions")))
    row, button = Chat.objects.filter(type=ChatType.INBOUND).order_by("id")
    assert row.metadata["choice"] == {"type": "list_reply", "id": "row-7", "title": "Large pizza"}
    assert row.metadata["text"]["body"] == "Large pizza"
    assert button.metadata["choice"] == {
        "type": "button",
        "id": "STOP_PROMOS",
        "payload": "STOP_PROMOS",
        "title": "Stop promotions",
    }
    assert button.metadata["text"]["body"] == "Stop promotions"


def test_a_button_reply_matching_the_id_goes_before_a_text_rule_matching_the_title(webhook_org):
    canned(webhook_org, "yes", "exact match", "by title")
    canned(webhook_org, "confirm-1", "button", "by id")
    deliver(webhook_org, envelope(tap("confirm-1", "Yes")))
    assert [message["text"]["body"] for message in sent(webhook_org)] == ["by id"]
    # Without a `button` reply for its id, the title is matched by the text rules.
    deliver(webhook_org, envelope(tap("confirm-2", "Yes")))
    assert sent(webhook_org)[-1]["text"]["body"] == "by title"


def test_a_quick_reply_button_is_matched_by_its_payload(webhook_org):
    canned(webhook_org, "more_info", "exact match", "payload matched")
    canned(webhook_org, "tell me more", "exact match", "text matched")
    deliver(webhook_org, envelope(quick_reply("MORE_INFO", "Tell me more")))
    assert [message["text"]["body"] for message in sent(webhook_org)] == ["payload matched"]


def test_a_quick_reply_payload_leads_into_a_menu(webhook_org):
    canned(webhook_org, "TRACK_ORDER", "button", menu("Which order?", ("o1", "Order 1")))
    canned(webhook_org, "track my order", "exact match", "by text")
    deliver(webhook_org, envelope(quick_reply("TRACK_ORDER", "Track my order")))
    [message] = sent(webhook_org)
    assert message["interactive"]["body"]["text"] == "Which order?"


def test_button_ids_are_matched_exactly(org_a):
    reply = canned(org_a, "Orders", "button")
    assert find_reply(organization=org_a, text="x", tapped="Orders") == reply
    assert find_reply(organization=org_a, text="x", tapped="orders") is None
    assert find_reply(organization=org_a, text="Orders") is None  # typed words are not taps


@pytest.mark.parametrize(
    "criteria, text, matches",
    [
        ("exact match", "Hello", True),
        ("exact match", "HEY", True),
        ("exact match", "hey there", False),
        ("contains", "oh hi there", True),
        ("starts with", "hello world", True),
        ("ends with", "well, hey", True),
        ("ends with", "hey you", False),
    ],
)
def test_a_trigger_with_commas_is_a_list_of_alternatives(org_a, criteria, text, matches):
    reply = canned(org_a, "hi, hello,hey,", criteria)
    assert find_reply(organization=org_a, text=text) == (reply if matches else None)


def test_comma_alternatives_in_a_button_trigger(org_a):
    reply = canned(org_a, "yes,confirm", "button")
    assert find_reply(organization=org_a, text="", tapped="confirm") == reply


def test_placeholders_are_filled_and_missing_fields_are_empty(webhook_org):
    group = ContactGroup.objects.create(organization=webhook_org, name="VIP")
    ContactFactory(
        organization=webhook_org,
        phone=CUSTOMER,
        first_name="Ada",
        last_name=None,
        email=None,
        contact_group=group,
        address={"street": "1 Main St", "city": "Springfield", "zip": "12345"},
        metadata={"Plan Name": "Gold", "visits": 3},
    )
    canned(
        webhook_org,
        "who",
        "exact match",
        "{first_name}|{last_name}|{full_name}|{email}|{phone}|{group}|{organization_name}|"
        "{full_address}|{city}|{zip_code}|{country}|{plan_name}|{visits}|{unknown}|{{1}}",
    )
    deliver(webhook_org, envelope(text_message("who", sender=CUSTOMER)))
    [message] = sent(webhook_org)
    assert message["text"]["body"] == (
        f"Ada||Ada||+{CUSTOMER}|VIP|{webhook_org.name}|1 Main St, Springfield, 12345|"
        "Springfield|12345||Gold|3|{unknown}|{{1}}"
    )
    # The chat keeps what was sent, placeholders filled.
    assert (
        Chat.objects.get(type=ChatType.OUTBOUND).metadata["text"]["body"] == message["text"]["body"]
    )


def test_placeholders_in_an_interactive_body(webhook_org):
    canned(webhook_org, "menu", "exact match", menu("Hi {first_name}, pick one", ("a", "A")))
    deliver(webhook_org, envelope(text_message("menu", sender=CUSTOMER, name="Grace")))
    [message] = sent(webhook_org)
    assert message["interactive"]["body"]["text"] == "Hi Grace, pick one"
    assert message["interactive"]["action"]["buttons"][0]["reply"] == {"id": "a", "title": "A"}


def test_free_form_api_sends_are_never_rewritten(api, org_a):
    response = api.post(
        "/api/send", {"phone": "+14155552671", "message": "Hi {first_name}"}, format="json"
    )
    assert response.status_code == 200
    interactive = menu("Hi {first_name}", ("a", "{city}"))
    interactive["footer"] = {"text": "{organization_name}"}
    response = api.post(
        "/api/send/interactive",
        {"phone": "+14155552671", "interactive": interactive},
        format="json",
    )
    assert response.status_code == 200
    text, buttons = sandbox.sent_messages(org_a.id)
    assert text.payload["text"]["body"] == "Hi {first_name}"
    assert buttons.payload["interactive"] == interactive


# Saving an interactive reply: the limits of POST /api/send/interactive, named by path.


def create(api, response, **body):
    return api.post(
        "/api/canned-replies",
        {
            "name": "Menu",
            "trigger": "menu",
            "match_criteria": "exact match",
            "response_type": "interactive",
            "response": response if isinstance(response, str) else json.dumps(response),
            **body,
        },
        format="json",
    )


@pytest.mark.parametrize(
    "response, field",
    [
        (menu("Pick", *[(f"id{i}", f"Title {i}") for i in range(3)]), None),
        (menu("Pick", *[(f"id{i}", f"Title {i}") for i in range(4)]), "response.action.buttons"),
        (menu("Pick", ("id", "t" * 20)), None),
        (menu("Pick", ("id", "t" * 21)), "response.action.buttons.0.reply.title"),
        ("not json", "response"),
        ("[1, 2]", "response"),
    ],
)
def test_an_interactive_reply_is_checked_when_saved(api, org_a, response, field):
    answer = create(api, response)
    if field is None:
        assert answer.status_code == 200, answer.json()
        record = api.get(f"/api/canned-replies/{answer.json()['id']}").json()["data"]
        assert json.loads(record["metadata"]) == {
            "type": "interactive",
            "data": {"interactive": response},
        }
    else:
        assert answer.status_code == 400
        assert field in answer.json()["errors"], answer.json()


def test_the_button_criterion_is_taken_by_the_api(api, org_a):
    answer = create(api, menu("Pick", ("a", "A")), match_criteria="button", trigger="orders")
    assert answer.status_code == 200, answer.json()
    record = api.get(f"/api/canned-replies/{answer.json()['id']}").json()["data"]
    assert record["match_criteria"] == "button"
    edited = api.put(
        f"/api/canned-replies/{answer.json()['id']}",
        {"response": json.dumps(menu("Pick", ("a", "a" * 21)))},
        format="json",
    )
    assert edited.status_code == 400
    assert "response.action.buttons.0.reply.title" in edited.json()["errors"]


def test_a_list_rows_id_leads_to_the_next_reply(webhook_org):
    rows = {
        "type": "list",
        "body": {"text": "Pick a size"},
        "action": {
            "button": "Sizes",
            "sections": [{"rows": [{"id": "size-l", "title": "Large"}]}],
        },
    }
    canned(webhook_org, "sizes", "exact match", rows)
    canned(webhook_org, "size-l", "button", "A large one, {first_name}.")
    deliver(webhook_org, envelope(text_message("sizes", sender=CUSTOMER, name="Ada")))
    deliver(webhook_org, envelope(tap("size-l", "Large", kind="list_reply")))
    first, second = sent(webhook_org)
    assert first["interactive"] == rows
    assert second["text"]["body"] == "A large one, Ada."


def test_placeholders_in_an_interactive_header_and_footer_stay_within_the_limits(webhook_org):
    ContactFactory(
        organization=webhook_org,
        phone=CUSTOMER,
        first_name="Ada",
        last_name=None,
        metadata={"Plan Name": "P" * 80, "notes": "n" * 2000},
    )
    interactive = {
        **menu("{notes}", ("a", "A")),
        "header": {"type": "text", "text": "Plan {plan_name}"},
        "footer": {"text": "For {first_name} {last_name}"},
    }
    canned(webhook_org, "plan", "exact match", interactive)
    deliver(webhook_org, envelope(text_message("plan", sender=CUSTOMER)))
    [message] = sent(webhook_org)
    sent_interactive = message["interactive"]
    # Filled, then cut to WhatsApp's limits: what was checked when saved still holds.
    assert sent_interactive["header"] == {"type": "text", "text": ("Plan " + "P" * 80)[:60]}
    assert sent_interactive["body"]["text"] == "n" * 1024
    assert sent_interactive["footer"]["text"] == "For Ada "
    assert sent_interactive["action"] == interactive["action"]
    chat = Chat.objects.get(type=ChatType.OUTBOUND)
    assert chat.metadata["interactive"] == sent_interactive  # the chat keeps what was sent


def test_a_text_that_empty_fields_would_leave_blank_goes_as_written(webhook_org):
    ContactFactory(organization=webhook_org, phone=CUSTOMER, first_name="Ada", last_name=None)
    canned(webhook_org, "surname", "exact match", "{last_name}")
    deliver(webhook_org, envelope(text_message("surname", sender=CUSTOMER)))
    [message] = sent(webhook_org)
    assert message["text"]["body"] == "{last_name}"  # WhatsApp refuses a blank text
