"""Laravel's method spoofing (docs/api.md): a POST that says it is a PUT, PATCH or DELETE,
by the form field `_method` (or the query parameter) or the header
`X-HTTP-Method-Override`, is that method, as PHP clients of the original product send
it (its routes took them through Laravel's own spoofing)."""

import json
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from contacts.models import Contact
from tests.channel import set_channel
from tests.factories import ContactFactory
from tests.inbound.conftest import APP_SECRET, envelope, sign, text_message

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def contact(org_a):
    return ContactFactory(organization=org_a, first_name="Ada", phone="14155552671")


def test_a_form_field_makes_a_post_a_put(api, contact):
    body = urlencode({"_method": "PUT", "last_name": "Lovelace"})
    response = api.post(f"/api/contacts/{contact.uuid}", body, content_type=FORM)
    assert response.status_code == 200, response.content
    contact.refresh_from_db()
    assert contact.last_name == "Lovelace"


def test_a_multipart_form_field_makes_a_post_a_patch(api, contact):
    body = encode_multipart(BOUNDARY, {"_method": "patch", "city": "Lisbon"})
    response = api.post(f"/api/contacts/{contact.uuid}", body, content_type=MULTIPART_CONTENT)
    assert response.status_code == 200, response.content
    contact.refresh_from_db()
    assert contact.address["city"] == "Lisbon"


def test_the_header_makes_a_post_a_delete(api, contact):
    response = api.post(f"/api/contacts/{contact.uuid}", HTTP_X_HTTP_METHOD_OVERRIDE="DELETE")
    assert response.status_code == 200, response.content
    assert not Contact.objects.live().filter(pk=contact.pk).exists()


def test_the_header_goes_before_the_form_field(api, contact):
    body = urlencode({"_method": "DELETE", "last_name": "Lovelace"})
    response = api.post(
        f"/api/contacts/{contact.uuid}", body, content_type=FORM, HTTP_X_HTTP_METHOD_OVERRIDE="PUT"
    )
    assert response.status_code == 200
    contact.refresh_from_db()
    assert contact.deleted_at is None and contact.last_name == "Lovelace"


def test_a_query_parameter_is_read_too(api, contact):
    response = api.post(
        f"/api/contacts/{contact.uuid}?_method=PUT", {"last_name": "Byron"}, format="json"
    )
    assert response.status_code == 200
    contact.refresh_from_db()
    assert contact.last_name == "Byron"


def test_post_stays_a_post(api):
    body = urlencode({"_method": "POST", "first_name": "Ada", "phone": "+14155552671"})
    response = api.post("/api/contacts", body, content_type=FORM)
    assert response.status_code == 200
    assert Contact.objects.filter(phone="14155552671").exists()


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "TRACE", "nonsense", "PUT PUT"])
def test_another_method_is_a_400_that_changes_nothing(api, contact, method):
    body = urlencode({"_method": method, "last_name": "Lovelace"})
    response = api.post(f"/api/contacts/{contact.uuid}", body, content_type=FORM)
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "message": "The method override (_method or X-HTTP-Method-Override) must be PUT, "
        "PATCH or DELETE.",
    }
    contact.refresh_from_db()
    assert contact.last_name != "Lovelace"
    header = api.post(f"/api/contacts/{contact.uuid}", HTTP_X_HTTP_METHOD_OVERRIDE=method)
    assert header.status_code == 400


def test_a_get_is_never_overridden(api, contact):
    response = api.get(f"/api/contacts/{contact.uuid}", HTTP_X_HTTP_METHOD_OVERRIDE="DELETE")
    assert response.status_code == 200
    assert Contact.objects.live().filter(pk=contact.pk).exists()


def test_a_malformed_multipart_body_is_left_to_the_parsers(api, contact):
    body = b"--" + BOUNDARY.encode() + b"\r\nnot a part"
    response = api.post(f"/api/contacts/{contact.uuid}", body, content_type=MULTIPART_CONTENT)
    assert response.status_code in (400, 405)
    assert response["Content-Type"].startswith("application/json")


def test_the_channels_webhook_is_not_spoofed(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    body = json.dumps(envelope(text_message("Hi"))).encode()
    response = Client().post(
        f"/webhooks/whatsapp/{org_a.uuid}",
        body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=sign(body),
        HTTP_X_HTTP_METHOD_OVERRIDE="DELETE",
    )
    assert response.status_code == 200
    assert response.json()["processed"]["messages"] == 1
