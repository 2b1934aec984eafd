"""Limits on what a client can make the service do: body size and failed authentications."""

import json

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from contacts.models import Contact
from messaging_project.api import auth_failures
from tests.factories import OrganizationFactory

LIMIT = settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def padded_contact(size: int) -> bytes:
    """A valid contact body of exactly `size` bytes, padded with JSON whitespace."""
    body = json.dumps({"first_name": "Ada", "phone": "+14155552671"})
    return (body[:-1] + " " * (size - len(body)) + "}").encode()


@pytest.mark.django_db
def test_a_body_over_the_limit_is_a_json_413_and_changes_nothing(api):
    response = api.post("/api/contacts", padded_contact(LIMIT + 1), content_type="application/json")
    assert response.status_code == 413
    assert response.json() == {"statusCode": 413, "message": "The request body is too large."}
    assert not Contact.objects.exists()


@pytest.mark.django_db
def test_a_body_at_the_limit_is_read(api):
    response = api.post("/api/contacts", padded_contact(LIMIT), content_type="application/json")
    assert response.status_code == 200, response.content
    assert Contact.objects.count() == 1


@pytest.mark.django_db
def test_the_webhook_refuses_an_oversized_body_with_json(org_a):
    response = APIClient().post(
        f"/webhooks/whatsapp/{org_a.uuid}",
        b"{" + b" " * LIMIT + b"}",
        content_type="application/json",
    )
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["statusCode"] == 413


def test_the_largest_valid_sends_fit_well_under_the_limit():
    """Every text at its maximum length, in a character JSON writes as a 12-byte
    surrogate pair: still under a quarter of the limit."""
    wide = "\U0001f600"
    text_message = {"phone": "+14155552671", "message": wide * 4096}
    interactive = {
        "phone": "+14155552671",
        "message": wide * 1024,
        "header": wide * 60,
        "footer": wide * 60,
        "buttons": [{"id": f"{n}" + wide * 255, "title": f"{n}" + wide * 19} for n in range(3)],
    }
    for body in (text_message, interactive):
        assert len(json.dumps(body).encode()) < LIMIT / 4


def bad_client(address: str = "203.0.113.7") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.credentials(HTTP_AUTHORIZATION="Bearer wam_000000000000_" + "x" * 43)
    return client


@pytest.mark.django_db
def test_too_many_failed_authentications_block_the_address_even_for_a_valid_token(api, settings):
    settings.API_AUTH_FAILURE_LIMIT = 5
    guesser = bad_client("127.0.0.1")  # the address `api` uses too
    for _ in range(5):
        assert guesser.get("/api/contacts").status_code == 401

    blocked = guesser.get("/api/contacts")
    assert blocked.status_code == 429
    assert blocked.json() == {"statusCode": 429, "message": "Too Many Attempts."}
    assert 1 <= int(blocked["Retry-After"]) <= 60

    valid = api.get("/api/contacts")
    assert valid.status_code == 429
    assert "Retry-After" in valid


@pytest.mark.django_db
def test_other_addresses_are_not_blocked(api, settings):
    settings.API_AUTH_FAILURE_LIMIT = 3
    guesser = bad_client("203.0.113.7")
    for _ in range(4):
        guesser.get("/api/contacts")
    assert guesser.get("/api/contacts").status_code == 429
    assert api.get("/api/contacts").status_code == 200  # from 127.0.0.1


@pytest.mark.django_db
def test_the_block_ends_with_the_window(monkeypatch, settings):
    settings.API_AUTH_FAILURE_LIMIT = 2
    now = 1_800_000_000.0  # the start of a one-minute window
    for _ in range(2):
        auth_failures.record_failure("203.0.113.7", now=now)
    assert auth_failures.blocked_for("203.0.113.7", now=now + 59) == 1
    assert auth_failures.blocked_for("203.0.113.7", now=now + 60) is None


@pytest.mark.django_db
def test_requests_without_a_token_are_not_counted(settings):
    settings.API_AUTH_FAILURE_LIMIT = 2
    client = APIClient(REMOTE_ADDR="203.0.113.7")
    for _ in range(5):
        assert client.get("/api/contacts").status_code == 401
    assert auth_failures.blocked_for("203.0.113.7") is None


@pytest.mark.django_db
def test_a_zero_limit_turns_the_check_off(settings):
    settings.API_AUTH_FAILURE_LIMIT = 0
    guesser = bad_client()
    for _ in range(30):
        assert guesser.get("/api/contacts").status_code == 401


@pytest.mark.django_db
def test_valid_tokens_spend_nothing_of_the_failure_budget(settings):
    settings.API_AUTH_FAILURE_LIMIT = 2
    from tests.conftest import client_for

    client = client_for(OrganizationFactory(rate_limit=1000))
    for _ in range(5):
        assert client.get("/api/me").status_code == 200
