"""What the admin inbox's tests share: organization A on the loopback Cloud API with
its webhook secrets, a manager and an agent of A, and a customer who writes through the
signed webhook."""

import itertools
import json
import time

import requests

from accounts.models import Role
from accounts.services import create_staff_user
from tests.admin.conftest import PASSWORD
from tests.channel import PHONE_NUMBER_ID, set_channel
from tests.inbound.conftest import APP_SECRET, VERIFY_TOKEN, envelope, sign, status, statuses

CUSTOMER = "14155552671"
_ids = itertools.count(1)


def with_webhook_secrets(organization):
    set_channel(organization, app_secret=APP_SECRET, verify_token=VERIFY_TOKEN)
    return organization


def manager_of(organization, username: str = "maria"):
    return create_staff_user(
        username=username, organization=organization, password=PASSWORD, role=Role.MANAGER
    )


def agent_of(organization, username: str = "aaron"):
    return create_staff_user(
        username=username, organization=organization, password=PASSWORD, role=Role.AGENT
    )


def webhook_body(*values) -> bytes:
    return json.dumps(envelope(*values)).encode()


def post_webhook(base_url: str, organization, *values) -> None:
    """Deliver a signed webhook to a running server, as WhatsApp does."""
    body = webhook_body(*values)
    response = requests.post(
        f"{base_url}/webhooks/whatsapp/{organization.uuid}",
        data=body,
        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)},
        timeout=10,
    )
    assert response.status_code == 200, response.text


def customer_message(text: str, *, name: str = "Ada Lovelace", **message) -> dict:
    """A text from the customer, written now (Meta's `messages` value)."""
    return {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "contacts": [{"profile": {"name": name}, "wa_id": CUSTOMER}],
        "messages": [
            {
                "from": CUSTOMER,
                "id": f"wamid.INBOX{next(_ids):08d}",
                "timestamp": str(int(time.time())),
                "type": "text",
                "text": {"body": text},
                **message,
            }
        ],
    }


def delivered(wam_id: str, name: str, timestamp: int = 1_700_000_100):
    return statuses(status(wam_id, name, timestamp, recipient_id=CUSTOMER))
