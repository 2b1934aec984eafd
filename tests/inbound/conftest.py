"""Fixtures for the webhook: a signed-delivery helper and Cloud API payload builders."""

import hashlib
import hmac
import itertools
import json

import pytest
from django.test import Client

from business_numbers.gateway import sandbox
from canned_replies import services as reply_services
from tests.channel import PHONE_NUMBER_ID, set_channel

APP_SECRET = "app-secret-for-tests"
VERIFY_TOKEN = "verify-me"
_ids = itertools.count(1)


@pytest.fixture(autouse=True)
def empty_outbox():
    sandbox.clear_outbox()
    yield
    sandbox.clear_outbox()


@pytest.fixture
def webhook_org(org_a):
    """Organization A on the sandbox, with the webhook secrets set."""
    set_channel(org_a, app_secret=APP_SECRET, verify_token=VERIFY_TOKEN)
    return org_a


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def deliver(organization, payload, *, secret: str = APP_SECRET, signature: str | None = None):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {}
    if signature is not None or secret is not None:
        headers["HTTP_X_HUB_SIGNATURE_256"] = (
            signature if signature is not None else sign(body, secret)
        )
    return Client().post(
        f"/webhooks/whatsapp/{organization.uuid}", body, content_type="application/json", **headers
    )


def envelope(*values) -> dict:
    """A Cloud API webhook with one entry and one change per value."""
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "102290129340398",
                "changes": [{"field": "messages", "value": value} for value in values],
            }
        ],
    }


def status(wam_id: str, name: str, timestamp: int, **extra) -> dict:
    return {
        "id": wam_id,
        "status": name,
        "timestamp": str(timestamp),
        "recipient_id": "14155552671",
        **extra,
    }


def statuses(*items) -> dict:
    return {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "statuses": list(items),
    }


def text_message(
    text: str, *, sender: str = "14155552671", name: str = "Ada", wam_id: str | None = None
) -> dict:
    wam_id = wam_id or f"wamid.IN{next(_ids):010d}"
    return {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "contacts": [{"profile": {"name": name}, "wa_id": sender}],
        "messages": [
            {
                "from": sender,
                "id": wam_id,
                "timestamp": "1700000000",
                "type": "text",
                "text": {"body": text},
            }
        ],
    }


def button_reply(title: str, *, sender: str = "14155552671") -> dict:
    return {
        "messaging_product": "whatsapp",
        "contacts": [{"profile": {"name": "Ada"}, "wa_id": sender}],
        "messages": [
            {
                "from": sender,
                "id": f"wamid.BTN{next(_ids):010d}",
                "timestamp": "1700000000",
                "type": "interactive",
                "interactive": {
                    "type": "button_reply",
                    "button_reply": {"id": "b1", "title": title},
                },
            }
        ],
    }


def answer_hours(organization, response: str = "9 to 5"):
    """A canned reply to "hours", the one the auto-reply tests send; the reply."""
    return reply_services.create_canned_reply(
        organization=organization,
        name="hours",
        trigger="hours",
        match_criteria="contains",
        response=response,
    )
