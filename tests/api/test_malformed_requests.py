"""Requests Django would misread or answer in HTML: a chunked body (no Content-Length),
an empty body declared as JSON, a Host header we do not serve. Each is a JSON error
under /api/ and /webhooks/ and changes nothing.

The chunked body is also sent to a real gunicorn over a raw socket: the test client
cannot send one, and the server is where a chunked body really arrives.
"""

import http.client
import json
import os
import socket
from pathlib import Path

import pytest
from django.test import Client

from contacts.models import Contact
from devtools.loopback import free_port, wait_until_listening
from tests.api.test_rate_limit_gunicorn import manage, start_gunicorn
from tests.channel import set_channel
from tests.factories import ContactFactory
from tests.inbound.conftest import APP_SECRET, sign

ROOT = Path(__file__).resolve().parents[2]
LENGTH_REQUIRED = {
    "statusCode": 411,
    "message": "A request body must be sent with a Content-Length header.",
}
MALFORMED = {"statusCode": 400, "message": "Malformed JSON body."}
CONTACT = {"first_name": "Ada", "phone": "+14155552671"}


def chunked(client: Client, method: str, path: str, **headers):
    """A request announcing a chunked body: as Django sees it, no Content-Length."""
    return client.generic(
        method,
        path,
        b"",
        CONTENT_TYPE="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
        **headers,
    )


@pytest.mark.django_db
class TestChunkedBodies:
    def test_a_chunked_edit_is_411_and_changes_nothing(self, api, org_a):
        contact = ContactFactory(organization=org_a, first_name="Ada")

        response = chunked(api, "PUT", f"/api/contacts/{contact.uuid}")

        assert response.status_code == 411
        assert response.json() == LENGTH_REQUIRED
        assert response["Content-Type"] == "application/json"
        contact.refresh_from_db()
        assert contact.first_name == "Ada"

    def test_a_chunked_create_is_411(self, api):
        response = chunked(api, "POST", "/api/contacts")
        assert response.status_code == 411
        assert response.json() == LENGTH_REQUIRED
        assert not Contact.objects.exists()

    def test_a_chunked_webhook_delivery_is_411(self, org_a):
        set_channel(org_a, app_secret=APP_SECRET)
        response = chunked(
            Client(), "POST", f"/webhooks/whatsapp/{org_a.uuid}", HTTP_X_HUB_SIGNATURE_256=sign(b"")
        )
        assert response.status_code == 411
        assert response.json() == LENGTH_REQUIRED


@pytest.mark.django_db
class TestEmptyJsonBodies:
    @pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
    def test_an_empty_json_body_is_malformed(self, api, org_a, method):
        contact = ContactFactory(organization=org_a, first_name="Ada")
        path = "/api/contacts" if method == "POST" else f"/api/contacts/{contact.uuid}"

        response = api.generic(method, path, b"", content_type="application/json")

        assert response.status_code == 400
        assert response.json() == MALFORMED
        assert Contact.objects.count() == 1

    def test_an_empty_json_send_is_malformed(self, api):
        response = api.generic("POST", "/api/send", b"", content_type="application/json")
        assert response.status_code == 400
        assert response.json() == MALFORMED

    def test_an_empty_object_is_still_a_validation_error(self, api):
        response = api.post("/api/contacts", b"{}", content_type="application/json")
        assert response.status_code == 400
        assert set(response.json()["errors"]) == {"first_name", "phone"}

    def test_a_body_free_request_is_untouched(self, api):
        response = api.generic("GET", "/api/contacts", b"", content_type="application/json")
        assert response.status_code == 200


@pytest.mark.django_db
class TestUnknownHost:
    @pytest.mark.parametrize("path", ["/api/contacts", "/api/nowhere", "/webhooks/whatsapp/x"])
    def test_a_host_we_do_not_serve_is_a_json_400(self, api, path):
        response = api.get(path, HTTP_HOST="evil.com")
        assert response.status_code == 400
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"statusCode": 400, "message": "Invalid Host header."}

    def test_pages_outside_the_api_keep_djangos_answer(self):
        response = Client().get("/admin/login/", HTTP_HOST="evil.com")
        assert response.status_code == 400
        assert not response["Content-Type"].startswith("application/json")


# A real server: the same requests over a raw socket.


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_database_in):
    var_dir = tmp_path_factory.mktemp("gunicorn")
    migrated_database_in(var_dir)
    env = {
        **os.environ,
        "VAR_DIR": str(var_dir),
        "DATABASE_URL": "",
        "REDIS_URL": "",
        "SECRET_KEY": "test",
    }
    organization = manage(env, "create_organization", "Chunks")
    token = manage(env, "issue_token", organization)
    port = free_port()
    process = start_gunicorn(env, port, "--workers", "1")
    try:
        assert wait_until_listening(port, timeout=30, process=process), "gunicorn did not start"
        yield {"port": port, "token": token, "organization": organization}
    finally:
        process.terminate()
        process.wait(timeout=30)


def raw(port: int, head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send a request exactly as written; the status, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return response.status, headers, response.read()


def as_chunks(body: bytes) -> bytes:
    return f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"


def contacts_on(server) -> int:
    status, _, content = raw(
        server["port"],
        f"GET /api/contacts HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer {server['token']}\n"
        "Connection: close\n",
    )
    assert status == 200
    return json.loads(content)["meta"]["total"]


def test_gunicorn_answers_a_chunked_body_with_a_json_411_and_stores_nothing(server):
    body = json.dumps(CONTACT).encode()
    status, headers, content = raw(
        server["port"],
        "POST /api/contacts HTTP/1.1\nHost: 127.0.0.1\n"
        f"Authorization: Bearer {server['token']}\nContent-Type: application/json\n"
        "Transfer-Encoding: chunked\nConnection: close\n",
        as_chunks(body),
    )
    assert status == 411
    assert headers["content-type"] == "application/json"
    assert json.loads(content) == LENGTH_REQUIRED
    assert contacts_on(server) == 0

    # The same body with its length is read and stored.
    status, _, _ = raw(
        server["port"],
        "POST /api/contacts HTTP/1.1\nHost: 127.0.0.1\n"
        f"Authorization: Bearer {server['token']}\nContent-Type: application/json\n"
        f"Content-Length: {len(body)}\nConnection: close\n",
        body,
    )
    assert status == 200
    assert contacts_on(server) == 1


def test_gunicorn_answers_a_chunked_webhook_with_a_json_411(server):
    status, _, content = raw(
        server["port"],
        f"POST /webhooks/whatsapp/{server['organization']} HTTP/1.1\nHost: 127.0.0.1\n"
        "Content-Type: application/json\nTransfer-Encoding: chunked\nConnection: close\n",
        as_chunks(b"{}"),
    )
    assert status == 411
    assert json.loads(content) == LENGTH_REQUIRED


def test_gunicorn_answers_an_unknown_host_with_json(server):
    status, headers, content = raw(
        server["port"], "GET /api/contacts HTTP/1.1\nHost: evil.com\nConnection: close\n"
    )
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert json.loads(content) == {"statusCode": 400, "message": "Invalid Host header."}
