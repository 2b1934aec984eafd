"""The channel settings moved from accounts.Organization to sending.Channel: an upgrade
keeps every value, and a downgrade puts them back.

The test migrates the test database back to before the move (accounts 0005, sending
0002), stores organizations with the old columns, migrates forward, and finds every
value in the organization's Number row, working as before (the gateway, the webhook's
verify token); then it migrates back and finds the values in the old columns again.
"""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from accounts.models import Organization
from business_numbers.gateway import (
    ChannelNotConfigured,
    CloudApiGateway,
    SandboxGateway,
    gateway_for,
)
from business_numbers.models import Number
from tests.databases import migrate

BEFORE_THE_MOVE = [
    ("accounts", "0005_idempotencykey_to_base"),
    ("sending", "0002_chat_status_events"),
]
FIELDS = ("phone_number_id", "business_account_id", "access_token", "app_secret", "verify_token")
CLOUD_API = {
    "channel": "cloud_api",
    "phone_number_id": "106540352242922",
    "business_account_id": "102290129340398",
    "access_token": "EAAG-token-before-the-move",
    "app_secret": "app-secret-before-the-move",
    "verify_token": "verify-before-the-move",
}
# The old columns of each organization, by name; the ones not given had their defaults.
ORGANIZATIONS = {
    "On the Cloud API": CLOUD_API,
    "Sandbox with webhook secrets": {"app_secret": "sandbox-secret", "verify_token": "sandbox"},
    "Plain sandbox": {},
    "Cloud API without its token": {"channel": "cloud_api", "phone_number_id": "1"},
}
DEFAULTS = {"channel": "sandbox", **dict.fromkeys(FIELDS, "")}


def old_organization_model():
    return (
        MigrationExecutor(connection)
        .loader.project_state(BEFORE_THE_MOVE)
        .apps.get_model("accounts", "Organization")
    )


def old_columns(organization) -> dict:
    return {"channel": organization.channel, **{f: getattr(organization, f) for f in FIELDS}}


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_an_upgrade_keeps_every_channel_setting_and_a_downgrade_puts_them_back():
    migrate(BEFORE_THE_MOVE)
    try:
        OldOrganization = old_organization_model()
        for name, columns in ORGANIZATIONS.items():
            OldOrganization.objects.create(name=name, **columns)
    finally:
        migrate(None)

    for name, columns in ORGANIZATIONS.items():
        channel = Number.objects.get(organization__name=name)
        expected = {**DEFAULTS, **columns}
        assert {"channel": channel.kind, **{f: getattr(channel, f) for f in FIELDS}} == expected
    organizations = {o.name: o for o in Organization.objects.all()}
    cloud = gateway_for(Number.objects.default_for(organizations["On the Cloud API"]))
    assert isinstance(cloud, CloudApiGateway)
    assert (cloud.phone_number_id, cloud.access_token) == (
        "106540352242922",
        CLOUD_API["access_token"],
    )
    assert isinstance(
        gateway_for(Number.objects.default_for(organizations["Plain sandbox"])), SandboxGateway
    )
    with pytest.raises(ChannelNotConfigured):
        gateway_for(Number.objects.default_for(organizations["Cloud API without its token"]))
    sandbox = organizations["Sandbox with webhook secrets"]
    subscription = {"hub.mode": "subscribe", "hub.verify_token": "sandbox", "hub.challenge": "42"}
    answer = Client().get(f"/webhooks/whatsapp/{sandbox.uuid}", subscription)
    assert (answer.status_code, answer.content) == (200, b"42")

    migrate(BEFORE_THE_MOVE)
    try:
        restored = {o.name: old_columns(o) for o in old_organization_model().objects.all()}
        assert restored == {
            name: {**DEFAULTS, **columns} for name, columns in ORGANIZATIONS.items()
        }
    finally:
        migrate(None)
    assert Number.objects.count() == len(ORGANIZATIONS)
