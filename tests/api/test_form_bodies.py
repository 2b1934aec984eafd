"""Every write endpoint takes a form body, urlencoded or multipart, as Laravel does (the
original product's clients send them): nested fields in bracket notation, the same
validation as JSON (). The write endpoints are found by walking the
URLconf, so a new one is tried too."""

import re
import uuid
from urllib.parse import urlencode

import pytest
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from business_numbers.gateway import sandbox
from contacts.models import Contact
from events.models import Endpoint
from tests.factories import (
    CannedReplyFactory,
    ContactFactory,
    ContactGroupFactory,
    create_template,
)

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"
WRITES = ("post", "put", "patch")

# (route as the URLconf writes it, method) -> the form fields of a valid request.
BODIES = {
    ("contacts", "post"): [
        ("first_name", "Ada"),
        ("phone", "+14155552671"),
        ("address[city]", "Lisbon"),
        ("is_favorite", "1"),
    ],
    ("contacts/{uuid}", "put"): [("last_name", "Lovelace")],
    ("contacts/{uuid}", "patch"): [("last_name", "Lovelace")],
    ("contact-groups", "post"): [("name", "VIP")],
    ("contact-groups/{uuid}", "put"): [("name", "VIPs")],
    ("contact-groups/{uuid}", "patch"): [("name", "VIPs")],
    ("canned-replies", "post"): [
        ("name", "Hours"),
        ("trigger", "hours"),
        ("match_criteria", "contains"),
        ("response_type", "text"),
        ("response", "9 to 5"),
    ],
    ("canned-replies/{uuid}", "put"): [("response", "10 to 6")],
    ("canned-replies/{uuid}", "patch"): [("response", "10 to 6")],
    ("send", "post"): [
        ("phone", "+14155552671"),
        ("message", "Pick one"),
        ("buttons[0][id]", "yes"),
        ("buttons[0][title]", "Yes"),
        ("buttons[1][id]", "no"),
        ("buttons[1][title]", "No"),
    ],
    ("send/template", "post"): [
        ("phone", "+14155552671"),
        ("template[name]", "order_update"),
        ("template[language][code]", "en_US"),
        ("template[components][0][type]", "body"),
        ("template[components][0][parameters][0][type]", "text"),
        ("template[components][0][parameters][0][text]", "Ada"),
    ],
    ("send/media", "post"): [
        ("phone", "+14155552671"),
        ("media_type", "image"),
        ("media_url", "https://example.com/photo.jpg"),
        ("caption", "Our shop"),
    ],
    ("campaigns", "post"): [
        ("name", "Spring sale"),
        ("template[name]", "order_update"),
        ("template[language][code]", "en_US"),
        ("template[components][0][type]", "body"),
        ("template[components][0][parameters][0][type]", "text"),
        ("template[components][0][parameters][0][text]", "Ada"),
        ("phones[]", "+14155552671"),
        ("phones[]", "+14155552672"),
    ],
    ("webhooks", "post"): [
        ("url", "https://example.com/hook"),
        ("events[]", "message.received"),
        ("events[]", "contact.created"),
        ("format", "swiftchats"),
    ],
    ("webhooks/{uuid}", "put"): [("is_active", "0")],
    ("webhooks/{uuid}", "patch"): [("is_active", "0")],
}


def routed_writes():
    """(route with `{uuid}`, method) of every write routed under /api/: a viewset's own
    method map, or an APIView's handlers."""
    from django.urls import URLPattern, URLResolver, get_resolver

    found = set()

    def walk(patterns, prefix=""):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/"):
                callback = pattern.callback
                cls = getattr(callback, "cls", None)
                if cls is None:
                    continue
                methods = getattr(callback, "actions", None)
                methods = set(methods) if methods else {m for m in WRITES if hasattr(cls, m)}
                path = route.removeprefix("api/").replace("^", "").replace("$", "")
                path = re.sub(r"\(\?P<\w+>[^)]*\)", "{uuid}", path.replace("/?", ""))
                for method in methods & set(WRITES):
                    found.add((path.strip("/"), method))

    walk(get_resolver().url_patterns)
    return found


def records(org):
    """A live record of each resource, to edit."""
    return {
        "contacts": ContactFactory(organization=org, phone="14155550000"),
        "contact-groups": ContactGroupFactory(organization=org),
        "canned-replies": CannedReplyFactory(organization=org),
        "webhooks": Endpoint.objects.create(organization=org, url="https://example.com/h"),
    }


def multipart(fields):
    grouped: dict[str, list[str]] = {}
    for name, value in fields:
        grouped.setdefault(name, []).append(value)
    return encode_multipart(BOUNDARY, grouped), MULTIPART_CONTENT


def urlencoded(fields):
    return urlencode(fields), FORM


@pytest.fixture(autouse=True)
def loopback_ok(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    sandbox.clear_outbox()


def test_the_walk_finds_the_write_endpoints():
    found = routed_writes()
    assert ("contacts", "post") in found and ("send/template", "post") in found
    assert len(found) >= len(BODIES)


@pytest.fixture
def order_update(org_a):
    """The template the bodies send, known to the sandbox as WhatsApp knows a number's."""
    return create_template(
        organization=org_a,
        name="order_update",
        language="en_US",
        status="APPROVED",
        components=[{"type": "BODY", "text": "Hello {{1}}"}],
    )


@pytest.mark.parametrize("encode", [urlencoded, multipart], ids=["urlencoded", "multipart"])
def test_every_write_endpoint_takes_a_form_body(api, org_a, order_update, encode):
    own = records(org_a)
    for path, method in sorted(routed_writes()):
        resource = path.split("/")[0]
        record = own.get(resource)
        concrete = path.replace("{uuid}", str(record.uuid if record else uuid.uuid4()))
        body, content_type = encode(BODIES.get((path, method), []))
        response = api.generic(method.upper(), f"/api/{concrete}", body, content_type=content_type)
        assert response.status_code not in (415, 500), (path, method, response.content)
        assert response["Content-Type"].startswith("application/json"), (path, method)
        if (path, method) in BODIES:
            assert response.status_code == 200, (path, method, response.json())


@pytest.mark.parametrize("encode", [urlencoded, multipart], ids=["urlencoded", "multipart"])
def test_nested_fields_arrive_as_json_would(api, org_a, order_update, encode):
    api.generic("POST", "/api/contacts", *encode(BODIES[("contacts", "post")]))
    contact = Contact.objects.get(organization=org_a)
    assert contact.address["city"] == "Lisbon" and contact.is_favorite is True
    response = api.generic("POST", "/api/send/template", *encode(BODIES[("send/template", "post")]))
    assert response.status_code == 200
    [sent] = sandbox.sent_messages()
    assert sent.payload["template"]["components"] == [
        {"type": "body", "parameters": [{"type": "text", "text": "Ada"}]}
    ]
    response = api.generic("POST", "/api/webhooks", *encode(BODIES[("webhooks", "post")]))
    endpoint = Endpoint.objects.get(uuid=response.json()["id"])
    assert endpoint.events == ["contact.created", "message.received"]
    assert endpoint.format == "swiftchats"


@pytest.mark.parametrize("encode", [urlencoded, multipart], ids=["urlencoded", "multipart"])
def test_the_same_validation_as_json(api, encode):
    fields = [("phone", "+14155552671"), ("buttons[0][id]", "x"), ("buttons[0][title]", "")]
    form = api.generic("POST", "/api/send", *encode(fields))
    as_json = api.post(
        "/api/send",
        {"phone": "+14155552671", "buttons": [{"id": "x", "title": None}]},
        format="json",
    )
    assert form.status_code == as_json.status_code == 400
    assert form.json() == as_json.json()
    assert set(form.json()["errors"]) == {"message", "buttons.0.title"}


def test_an_unreadable_field_name_is_a_400(api):
    response = api.generic("POST", "/api/contacts", "phone]x[=1", content_type=FORM)
    assert response.status_code == 400
    assert response.json()["message"].startswith("Malformed form body.")
    response = api.generic("POST", "/api/contacts", "a" + "[b]" * 20 + "=1", content_type=FORM)
    assert response.status_code == 400


def test_other_content_types_are_still_415(api):
    response = api.post("/api/contacts", data="first_name=x", content_type="text/plain")
    assert response.status_code == 415


@pytest.mark.parametrize("key", ["³", "٣", "9" * 5000])
def test_a_key_of_digits_python_reads_but_php_would_not_is_a_name_not_a_500(api, key):
    # `³` and `٣` pass str.isdigit but int() refuses `³`; 5,000 digits pass too, over
    # int()'s limit. Either would have been an index and a 500.
    body = f"phone=%2B14155552671&template[components][{key}][type]=body"
    response = api.generic("POST", "/api/send/template", body, content_type=FORM)
    assert response.status_code == 400
