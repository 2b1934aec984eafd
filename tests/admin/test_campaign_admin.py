"""Creating a campaign in the admin: the add page offers the organization's synced
templates, its groups or pasted numbers, a rate and a start time, creates through
campaigns.services.create_campaign as the API does, then shows the progress page."""

from datetime import timedelta

from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus, Recipient
from tests.background import run_tasks
from tests.factories import ContactFactory, ContactGroupFactory

ADD = "/admin/campaigns/campaign/add/"


def test_the_add_page_offers_only_the_organizations_templates_and_groups(
    admin_a, records_a, records_b
):
    page = admin_a.get(ADD)
    assert page.status_code == 200
    html = page.content.decode()
    assert "alpha_welcome" in html and "Alpha group" in html
    assert "bravo_welcome" not in html and "Bravo group" not in html


def test_a_campaign_to_pasted_numbers_starts_and_shows_its_progress(
    admin_a, org_a, records_a, cloud_org
):
    template = records_a["messagetemplate"]
    response = admin_a.post(
        ADD,
        {
            "name": "Spring sale",
            "message_template": template.pk,
            "numbers": "+4915123456001\n+4915123456002, +4915123456003",
            "rate": "5",
        },
    )
    campaign = Campaign.objects.get(name="Spring sale")
    assert response.status_code == 302, response.content.decode()[:2000]
    assert response["Location"] == f"/admin/campaigns/campaign/{campaign.pk}/change/"
    assert campaign.organization == org_a
    assert campaign.template == {"name": "alpha_welcome", "language": {"code": "en_US"}}
    assert campaign.rate == 5
    assert campaign.status == CampaignStatus.RUNNING  # started through the service
    assert Recipient.objects.filter(campaign=campaign).count() == 3
    run_tasks()
    progress = admin_a.get(response["Location"]).content.decode()
    assert "<progress" in progress and "Spring sale" in progress


def test_a_scheduled_group_campaign_waits_for_its_time(admin_a, org_a, records_a):
    group = ContactGroupFactory(organization=org_a, name="Leads")
    ContactFactory(organization=org_a, contact_group=group)
    when = timezone.now() + timedelta(days=1)
    response = admin_a.post(
        ADD,
        {
            "name": "Tomorrow",
            "message_template": records_a["messagetemplate"].pk,
            "contact_group": group.pk,
            "scheduled_at_0": when.strftime("%Y-%m-%d"),
            "scheduled_at_1": when.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    campaign = Campaign.objects.get(name="Tomorrow")
    assert campaign.status == CampaignStatus.SCHEDULED
    assert campaign.contact_group == group


def test_bad_input_is_shown_on_the_form_and_creates_nothing(admin_a, org_a, records_a, records_b):
    base = {"name": "X", "message_template": records_a["messagetemplate"].pk}
    cases = [
        {**base},  # no recipients
        {**base, "numbers": "+12345"},  # not a number
        {**base, "numbers": "+4915123456001", "contact_group": records_a["contactgroup"].pk},
        {**base, "numbers": "+4915123456001", "rate": "0"},
        {**base, "numbers": "+4915123456001", "message_template": records_b["messagetemplate"].pk},
        {**base, "contact_group": records_b["contactgroup"].pk},
    ]
    for body in cases:
        response = admin_a.post(ADD, body)
        assert response.status_code == 200, body
        assert "errornote" in response.content.decode(), body
    assert not Campaign.objects.filter(name="X").exists()
