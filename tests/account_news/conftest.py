"""Fixtures for the account's news: real payloads (tests/account_news/payloads, each file
naming its source) delivered through the signed webhook."""

import json
from pathlib import Path

import pytest

from tests.admin.conftest import fast_passwords, staff_a  # noqa: F401 (fixtures)
from tests.channel import set_channel
from tests.events.conftest import receiver, webhook_settings  # noqa: F401 (fixtures)
from tests.inbound.conftest import APP_SECRET, deliver  # noqa: F401 (re-exported)

PAYLOADS = Path(__file__).parent / "payloads"


def payload(file: str, name: str) -> dict:
    document = json.loads((PAYLOADS / file).read_text())
    assert document["_source"], f"{file} does not say where its payloads come from"
    return document["payloads"][name]


def account_of(payload: dict) -> str:
    return payload["entry"][0]["id"]


def value_of(payload: dict) -> dict:
    return payload["entry"][0]["changes"][0]["value"]


@pytest.fixture
def news_org(org_a):
    """Organization A on the Cloud API's settings (no token needed to receive), with the
    webhook's secret; its business account is set per test (`for_account`)."""
    set_channel(org_a, app_secret=APP_SECRET, kind="cloud_api", phone_number_id="106540352242922")
    return org_a


def for_account(org, payload: dict, **values):
    """The organization as the owner of the payload's business account."""
    return set_channel(org, business_account_id=account_of(payload), **values)
