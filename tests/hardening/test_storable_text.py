"""Text a database cannot store is a 400 naming the field, everywhere in the API.

PostgreSQL refuses NUL (U+0000) in text and in jsonb; no database stores a lone
surrogate (U+D800..U+DFFF), which has no UTF-8 form. Every string a client can send
is found by walking the OpenAPI schema: each string field of each request body, each
query parameter of each list. Sending one with such a character must be a 400 naming
that field (dotted for nested fields) and must change nothing: no record written, no
message sent. The suite runs on SQLite and on PostgreSQL.
"""

import json
from functools import cache
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

from business_numbers.models import Number
from campaigns.models import Campaign
from canned_replies.models import CannedReply
from contacts.models import Contact, ContactGroup
from events.models import Endpoint
from sending.models import Chat
from tests.factories import (
    CannedReplyFactory,
    ContactFactory,
    ContactGroupFactory,
    create_campaign_record,
    create_chat,
    create_template,
)

pytestmark = pytest.mark.django_db

UNSTORABLE = {"nul": "A\x00", "high-surrogate": "A\ud800", "low-surrogate": "\udfffA"}
PHONE = "+14155552671"
CONTACT = {
    "first_name": "Ada",
    "last_name": "Lovelace",
    "phone": PHONE,
    "email": "ada@example.com",
    "contact_group": None,
    "address": {"street": "1 Main St", "city": "X", "state": "Y", "zip": "1", "country": "Z"},
    # The original product's names for the group and the address, and its custom fields.
    "group": None,
    "street": "1 Main St",
    "city": "X",
    "state": "Y",
    "zip": "1",
    "country": "Z",
    "metadata": '{"Plan": "gold"}',
    "file": None,  # the original's avatar upload: empty is ignored, anything else refused
}
CANNED_REPLY = {
    "name": "Hours",
    "trigger": "hours",
    "match_criteria": "contains",
    "response_type": "text",
    "response": "9 to 5",
}
# A public address, so that the URL rule needs no DNS look-up.
WEBHOOK = {
    "url": "https://93.184.215.14/hook",
    "events": ["message.received"],
    "format": "standard",
}
SEND_FIELDS = {
    "reply_to": "wamid.HBgLMTQxNTU1NTI2NzE=",
    "from": "106540352242922",
    "first_name": "Ada",
    "last_name": "Lovelace",
    "email": "ada@example.com",
}
TEMPLATE = {
    "name": "order_ready",
    "language": "en_US",
    "category": "UTILITY",
    "components": [{"type": "BODY", "text": "Your order is ready."}],
}
# A valid body for every operation that takes one, holding every field the schema lists.
NUMBER = {
    "label": "Support",
    "kind": "cloud",
    "phone_number_id": "106540352242999",
    "business_account_id": "102290129340398",
    "access_token": "EAAG-support",
    "is_default": False,
}
VALID_BODIES = {
    ("post", "/api/webhooks"): WEBHOOK,
    ("put", "/api/webhooks/{uuid}"): {**WEBHOOK, "is_active": True},
    ("patch", "/api/webhooks/{uuid}"): {**WEBHOOK, "is_active": True},
    ("post", "/api/contacts"): CONTACT,
    ("put", "/api/contacts/{uuid}"): CONTACT,
    ("patch", "/api/contacts/{uuid}"): CONTACT,
    ("post", "/api/contact-groups"): {"name": "VIP"},
    ("put", "/api/contact-groups/{uuid}"): {"name": "VIP"},
    ("patch", "/api/contact-groups/{uuid}"): {"name": "VIP"},
    ("post", "/api/canned-replies"): CANNED_REPLY,
    ("put", "/api/canned-replies/{uuid}"): CANNED_REPLY,
    ("patch", "/api/canned-replies/{uuid}"): CANNED_REPLY,
    ("post", "/api/send"): {
        "phone": PHONE,
        "message": "Pick one",
        "header": "Menu",
        "footer": "Thanks",
        "buttons": [{"id": "a", "title": "A"}],
        "reply_to": "wamid.HBgLMTQxNTU1NTI2NzE=",
        "from": "106540352242922",
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": "ada@example.com",
    },
    ("post", "/api/send/template"): {
        "phone": PHONE,
        "reply_to": "wamid.HBgLMTQxNTU1NTI2NzE=",
        "from": "106540352242922",
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": "ada@example.com",
        "template": {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": [{"type": "body", "parameters": [{"type": "text", "text": "Ada"}]}],
        },
    },
    ("post", "/api/send/media"): {
        "phone": PHONE,
        "media_type": "document",
        "media_url": "https://93.184.215.14/invoice.pdf",  # a public address: no DNS needed
        "caption": "Your invoice",
        "file_name": "invoice.pdf",
        "id": None,  # an uploaded media id, instead of media_url
        "reply_to": "wamid.HBgLMTQxNTU1NTI2NzE=",
        "from": "106540352242922",
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": "ada@example.com",
    },
    ("post", "/api/send/interactive"): {
        "phone": PHONE,
        "interactive": {
            "type": "button",
            "body": {"text": "Pick one"},
            "action": {"buttons": [{"type": "reply", "reply": {"id": "a", "title": "A"}}]},
        },
        **SEND_FIELDS,
    },
    ("post", "/api/send/reaction"): {
        "phone": PHONE,
        "message_id": "wamid.HBgLMTQxNTU1NTI2NzE=",
        "emoji": "👍",
        **SEND_FIELDS,
    },
    ("post", "/api/send/location"): {
        "phone": PHONE,
        "latitude": 52.5,
        "longitude": 13.4,
        "name": "Shop",
        "address": "Berlin",
        **SEND_FIELDS,
    },
    ("post", "/api/send/contacts"): {
        "phone": PHONE,
        "contacts": [{"name": {"formatted_name": "Ana"}}],
        **SEND_FIELDS,
    },
    ("post", "/api/templates"): {**TEMPLATE, "number": "106540352242922"},
    ("put", "/api/templates/{uuid}"): {
        "category": "UTILITY",
        "components": TEMPLATE["components"],
    },
    ("patch", "/api/templates/{uuid}"): {
        "category": "UTILITY",
        "components": TEMPLATE["components"],
    },
    # A bad value inside a contact fails that row, reported by the import (tests/contacts).
    ("patch", "/api/channel"): {"enforce_service_window": True},
    ("post", "/api/numbers"): NUMBER,
    ("put", "/api/numbers/{uuid}"): {**NUMBER, "is_default": False},
    ("patch", "/api/numbers/{uuid}"): {**NUMBER, "is_default": False},
    ("post", "/api/contacts/import"): {
        "contacts": [{"phone": PHONE, "first_name": "Ada"}],
        "on_duplicate": "skip",
        "contact_group": "00000000-0000-0000-0000-000000000000",
    },
    # Both kinds of recipients, for the schema's every field; one is left out when sent.
    ("post", "/api/campaigns"): {
        "name": "Spring sale",
        "template": {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": [{"type": "body", "parameters": [{"type": "text", "text": "Ada"}]}],
        },
        "contact_group": "00000000-0000-0000-0000-000000000000",
        "phones": [PHONE],
        "scheduled_at": "2100-01-01T00:00:00Z",
        "rate": 10,
        "from": "106540352242922",
    },
    ("patch", "/api/conversations/{uuid}"): {
        "status": "resolved",
        "assignee": None,
        "labels": ["VIP"],
    },
    # Every field the schema lists; a valid send holds one of message, template, media.
    ("post", "/api/conversations/{uuid}/messages"): {
        "message": "Hi",
        "template": {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": [{"type": "body", "parameters": [{"type": "text", "text": "Ada"}]}],
        },
        "media_type": "document",
        "media_url": "https://93.184.215.14/invoice.pdf",
        "id": None,
        "caption": "Your invoice",
        "file_name": "invoice.pdf",
        "reply_to": "wamid.HBgLMTQxNTU1NTI2NzE=",
    },
    ("post", "/api/conversations/{uuid}/notes"): {"body": "Called them back"},
}


@cache
def schema() -> dict:
    """The OpenAPI schema /api/schema serves, built without a request (at collection)."""
    return SchemaGenerator().get_schema(request=None, public=True)


def resolve(node: dict) -> dict:
    while "$ref" in node:
        node = schema()["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def string_paths(node: dict, path: tuple = ()) -> list[tuple]:
    """The path of every string a body of this schema can hold; array items as index 0."""
    node = resolve(node)
    for combined in ("allOf", "oneOf", "anyOf"):
        if combined in node:
            found = [p for option in node[combined] for p in string_paths(option, path)]
            return list(dict.fromkeys(found))
    if node.get("type") == "object" or "properties" in node:
        return [
            p
            for name, child in node.get("properties", {}).items()
            for p in string_paths(child, (*path, name))
        ]
    if node.get("type") == "array":
        return string_paths(node["items"], (*path, 0))
    return [path] if node.get("type") == "string" else []


def body_fields() -> list:
    cases = []
    for path, operations in schema()["paths"].items():
        for method, operation in operations.items():
            if "requestBody" not in operation:
                continue
            body_schema = operation["requestBody"]["content"]["application/json"]["schema"]
            for field in string_paths(body_schema):
                cases.append(
                    pytest.param(method, path, field, id=f"{method} {path} {dotted(field)}")
                )
    return cases


def query_parameters() -> list:
    return [
        pytest.param(path, parameter["name"], id=f"{path}?{parameter['name']}")
        for path, operations in schema()["paths"].items()
        for method, operation in operations.items()
        if method == "get"
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query"
    ]


def dotted(path: tuple) -> str:
    return ".".join(str(part) for part in path)


def with_value(body: Any, path: tuple, value: str) -> Any:
    body = json.loads(json.dumps(body))
    target = body
    for part in path[:-1]:
        target = target[part]
    assert path[-1] in target or isinstance(target, list), (
        f"{dotted(path)} is missing from the body"
    )
    target[path[-1]] = value
    return body


def records() -> dict:
    """What the organization has, as the API shows it."""
    return {
        "counts": [
            model.objects.count() for model in (Contact, ContactGroup, CannedReply, Chat, Campaign)
        ],
        "contacts": list(Contact.objects.values()),
        "groups": list(ContactGroup.objects.values()),
        "replies": list(CannedReply.objects.values()),
    }


@pytest.fixture
def existing(org_a):
    """One record of each editable kind, so that edits reach a real record."""
    return {
        "/api/contacts/{uuid}": ContactFactory(organization=org_a),
        "/api/contact-groups/{uuid}": ContactGroupFactory(organization=org_a),
        "/api/canned-replies/{uuid}": CannedReplyFactory(organization=org_a),
        "/api/webhooks/{uuid}": Endpoint.objects.create(
            organization=org_a, url="https://93.184.215.14/hook"
        ),
        "/api/numbers/{uuid}": Number.objects.create(
            organization=org_a, kind="cloud_api", phone_number_id="106540352242998"
        ),
        "/api/templates/{uuid}": create_template(
            organization=org_a, name="order_ready", language="en_US", external_id="1"
        ),
        "/api/campaigns/{uuid}": create_campaign_record(
            organization=org_a, name="c", template={}, phones=[PHONE], rate=1
        ),
        "/api/conversations/{uuid}": create_chat(
            organization=org_a, contact=ContactFactory(organization=org_a), status="sent"
        ).conversation,
    }


def test_every_operation_with_a_body_has_a_valid_body_here():
    operations = {
        (method, path)
        for path, methods in schema()["paths"].items()
        for method, operation in methods.items()
        if "requestBody" in operation
    }
    assert operations == set(VALID_BODIES)


@pytest.mark.parametrize("text", UNSTORABLE.values(), ids=UNSTORABLE)
@pytest.mark.parametrize(("method", "path", "field"), body_fields())
def test_unstorable_text_in_any_body_field_is_a_400_naming_it(
    api, cloud_org, graph, existing, method, path, field, text
):
    url = path
    for template, record in existing.items():  # a record's path, or one under it
        if path.startswith(template):
            url = path.replace("{uuid}", str(record.uuid))
    body = with_value(VALID_BODIES[(method, path)], field, text)
    if path == "/api/campaigns":  # a group or phones, not both
        body.pop("phones" if field == ("contact_group",) else "contact_group")
    before = records()

    response = getattr(api, method)(url, json.dumps(body), content_type="application/json")

    assert response.status_code == 400, response.content
    assert dotted(field) in response.json()["errors"], response.json()
    assert records() == before
    assert graph.requests == []


@pytest.mark.parametrize(("path", "name"), query_parameters())
def test_a_nul_in_any_query_parameter_is_a_400_naming_it(api, org_a, existing, path, name):
    ContactFactory(organization=org_a)
    for template, record in existing.items():  # a list under a record: a real one
        if path.startswith(template):
            path = path.replace("{uuid}", str(record.uuid))

    response = api.get(path, {name: "A\x00"})

    assert response.status_code == 400, response.content
    assert name in response.json()["errors"], response.json()


@pytest.mark.parametrize("path", ["/api/contacts", "/api/contact-groups", "/api/canned-replies"])
def test_a_surrogate_spelled_in_a_query_string_is_searched_as_replacement_characters(
    api, org_a, path
):
    """A URL carries UTF-8, which has no lone surrogates: the bytes that would spell one
    are invalid, and Django reads them as U+FFFD, which every database stores."""
    response = api.get(f"{path}?search=%ED%A0%80")

    assert response.status_code == 200, response.content
    assert response.json()["data"] == []


@pytest.mark.parametrize("path", ["/api/contacts/%00", "/api/chats/A%00"])
def test_a_nul_in_a_path_is_not_found(api, org_a, path):
    response = api.get(path)

    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "message": "Not found."}
