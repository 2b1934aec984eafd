"""Campaigns in the staff admin: the progress bar and counts, and cancelling."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from campaigns.models import Campaign, CampaignStatus, RecipientStatus
from tests.admin.conftest import admin_a, fast_passwords, staff_a  # noqa: F401
from tests.background import run_tasks
from tests.campaigns.conftest import body

pytestmark = pytest.mark.django_db


def test_the_list_shows_progress_and_counts(admin_a, api, cloud_org, graph):  # noqa: F811
    api.post("/api/campaigns", body(phones=["+4915123456000", "+4915123456001"]), format="json")
    run_tasks()

    response = admin_a.get(reverse("admin:campaigns_campaign_changelist"))

    assert response.status_code == 200
    assert '<progress value="2" max="2"' in response.text
    assert "Spring sale" in response.text


def test_staff_can_cancel_a_campaign(admin_a, api, cloud_org, graph):  # noqa: F811
    uuid = api.post("/api/campaigns", body(phones=["+4915123456000"]), format="json").json()["id"]
    campaign = Campaign.objects.get(uuid=uuid)

    response = admin_a.post(
        reverse("admin:campaigns_campaign_changelist"),
        {"action": "cancel", ACTION_CHECKBOX_NAME: [campaign.pk]},
    )

    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.CANCELLED
    assert campaign.recipients.get().status == RecipientStatus.SKIPPED
    run_tasks()
    assert graph.requests == []


def test_a_campaign_page_opens_without_a_save_button(admin_a, api, cloud_org):  # noqa: F811
    uuid = api.post("/api/campaigns", body(phones=["+4915123456000"]), format="json").json()["id"]
    campaign = Campaign.objects.get(uuid=uuid)

    response = admin_a.get(reverse("admin:campaigns_campaign_change", args=[campaign.pk]))

    assert response.status_code == 200
    assert 'name="_save"' not in response.text
