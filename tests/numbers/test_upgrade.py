"""The upgrade from one channel per organization to many numbers: the test database is
migrated back to the old shape (sending 0015, campaigns 0003, no business_numbers), an
organization with its channel, chats, a template and a campaign is written the old way,
then the database is migrated forward. Every channel is its organization's default
number, every chat names it and its conversation, and clients see no change."""

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from accounts.models import Organization
from business_numbers.models import MessageTemplate, Number
from campaigns.models import Campaign
from sending.models import Chat, Conversation
from tests.conftest import client_for
from tests.databases import migrate

OLD_SHAPE = [
    ("sending", "0015_status_callback_data"),
    ("campaigns", "0003_paused_waiting_limits"),
    ("business_numbers", None),
]


def old_models():
    nodes = [(app, name) for app, name in OLD_SHAPE if name is not None]
    return MigrationExecutor(connection).loader.project_state(nodes).apps


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_every_channel_becomes_its_organizations_default_number_with_its_chats():
    migrate(OLD_SHAPE)
    try:
        apps = old_models()
        OldOrganization = apps.get_model("accounts", "Organization")
        cloud = OldOrganization.objects.create(name="On the Cloud API", uuid=uuid.uuid4())
        bare = OldOrganization.objects.create(name="Never configured", uuid=uuid.uuid4())
        apps.get_model("sending", "Channel").objects.create(
            organization=cloud,
            kind="cloud_api",
            phone_number_id="106540352242922",
            access_token="EAAG-old-token",
            app_secret="old-secret",
            quality_rating="GREEN",
        )
        Contact = apps.get_model("contacts", "Contact")
        ada = Contact.objects.create(organization=cloud, phone="4915112345678", uuid=uuid.uuid4())
        bob = Contact.objects.create(organization=bare, phone="4915187654321", uuid=uuid.uuid4())
        OldChat = apps.get_model("sending", "Chat")
        for n, (organization, contact) in enumerate([(cloud, ada), (cloud, ada), (bare, bob)]):
            OldChat.objects.create(
                organization=organization,
                contact=contact,
                uuid=uuid.uuid4(),
                wam_id=f"wamid.OLD{n}",
                type="inbound",
                status="received",
                metadata={"type": "text", "text": {"body": "hi"}},
            )
        apps.get_model("sending", "MessageTemplate").objects.create(
            organization=cloud, name="order_update", language="en_US", uuid=uuid.uuid4()
        )
        apps.get_model("campaigns", "Campaign").objects.create(
            organization=cloud,
            uuid=uuid.uuid4(),
            name="Spring",
            template={"name": "order_update", "language": {"code": "en_US"}},
            phones=["+4915112345678"],
            rate=10,
            scheduled_at=timezone.now(),
        )
    finally:
        migrate(None)

    on_cloud = Organization.objects.get(name="On the Cloud API")
    never = Organization.objects.get(name="Never configured")
    number = Number.objects.get(organization=on_cloud)
    assert (number.is_default, number.kind, number.phone_number_id) == (
        True,
        "cloud_api",
        "106540352242922",
    )
    assert (number.access_token, number.app_secret) == ("EAAG-old-token", "old-secret")
    sandbox = Number.objects.get(organization=never)
    assert (sandbox.is_default, sandbox.kind) == (True, "sandbox")
    assert Number.objects.filter(uuid__isnull=True).count() == 0

    assert set(Chat.objects.values_list("organization_id", "number_id")) == {
        (on_cloud.pk, number.pk),
        (never.pk, sandbox.pk),
    }
    assert Conversation.objects.count() == 2  # one per contact and number
    assert all(chat.conversation.number_id == chat.number_id for chat in Chat.objects.all())
    assert MessageTemplate.objects.get().number == number
    assert Campaign.objects.get().number == number

    # Clients see the channel as before, and the chats with their number.
    channel = client_for(on_cloud).get("/api/channel").json()["data"]
    assert (channel["phone_number_id"], channel["quality_rating"]) == ("106540352242922", "GREEN")
    listed = client_for(on_cloud).get("/api/chats").json()["data"]
    assert {chat["number"] for chat in listed} == {str(number.uuid)}
