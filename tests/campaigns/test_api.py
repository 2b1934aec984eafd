"""The campaigns API (): create, validate, list, show, recipients."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.api.schema import (
    CampaignDetail,
    CampaignPage,
    CampaignRecordSerializer,
    RecipientPage,
    RecipientRecordSerializer,
)
from campaigns.models import Campaign, Recipient
from campaigns.representations import campaign_data, recipient_data
from campaigns.selectors import campaigns_with_counts
from tests.background import run_tasks
from tests.campaigns.conftest import TEMPLATE, body, sends
from tests.factories import (
    ContactFactory,
    ContactGroupFactory,
    create_campaign_record,
    create_template,
)
from tests.shapes import assert_documented

pytestmark = pytest.mark.django_db


def test_a_campaign_to_a_group_sends_the_template_to_each_contact_once(
    api, cloud_org, graph, group
):
    response = api.post("/api/campaigns", body(contact_group=str(group.uuid)), format="json")

    assert response.status_code == 200, response.json()
    uuid = response.json()["id"]
    assert response.json()["message"] == "Request processed successfully"
    run_tasks()
    sent = sends(graph)
    assert sorted(r.json["to"] for r in sent) == [f"4915123456{n:03d}" for n in range(3)]
    assert all(r.json["template"]["name"] == "order_update" for r in sent)
    data = api.get(f"/api/campaigns/{uuid}").json()["data"]
    assert data["status"] == "completed"
    assert (data["total"], data["pending"], data["sent"], data["failed"]) == (3, 0, 3, 0)
    assert data["started_at"] and data["finished_at"]


def test_a_phone_list_is_deduplicated_and_a_bad_number_fails_alone(api, cloud_org, graph):
    phones = ["+4915123456000", "4915123456000", "not a number", "+4915123456001"]
    response = api.post("/api/campaigns", body(phones=phones), format="json")
    assert response.status_code == 200, response.json()
    run_tasks()

    assert len(sends(graph)) == 2
    data = api.get(f"/api/campaigns/{response.json()['id']}").json()["data"]
    assert (data["total"], data["sent"], data["failed"]) == (3, 2, 1)
    recipients = api.get(f"/api/campaigns/{response.json()['id']}/recipients").json()["data"]
    bad = [r for r in recipients if r["status"] == "failed"]
    assert bad == [
        {
            "phone": "not a number",
            "contact_uuid": None,
            "status": "failed",
            "chat_uuid": None,
            "error": "The phone must be a valid phone number with its country code.",
        }
    ]
    good = [r for r in recipients if r["status"] == "sent"]
    assert all(r["chat_uuid"] and r["contact_uuid"] for r in good)


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({}, "phones"),
        ({"phones": []}, "phones"),
        ({"phones": "+4915123456000"}, "phones"),
        ({"phones": [4915123456000]}, "phones"),
        ({"phones": ["+4915123456000"], "contact_group": "GROUP"}, "contact_group"),
        ({"contact_group": "00000000-0000-0000-0000-000000000000"}, "contact_group"),
        ({"contact_group": "nope"}, "contact_group"),
        ({"phones": ["+4915123456000"], "rate": 0}, "rate"),
        ({"phones": ["+4915123456000"], "rate": 1001}, "rate"),
        ({"phones": ["+4915123456000"], "rate": "fast"}, "rate"),
        ({"phones": ["+4915123456000"], "rate": True}, "rate"),
        ({"phones": ["+4915123456000"], "scheduled_at": "2001-01-01T00:00:00Z"}, "scheduled_at"),
        ({"phones": ["+4915123456000"], "scheduled_at": "tomorrow"}, "scheduled_at"),
        ({"phones": ["+4915123456000"], "name": ""}, "name"),
        ({"phones": ["+4915123456000\x00"]}, "phones"),
        ({"phones": ["+4915123456000"], "template": {"name": "x"}}, "template"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(api, group, values, field):
    if values.get("contact_group") == "GROUP":
        values["contact_group"] = str(group.uuid)
    response = api.post("/api/campaigns", body(**values), format="json")

    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]
    assert any(key == field or key.startswith(f"{field}.") for key in errors), errors
    assert not Campaign.objects.exists()


def test_too_many_phones_is_a_400(api):
    phones = [f"+49151{n:08d}" for n in range(10_001)]
    response = api.post("/api/campaigns", body(phones=phones), format="json")

    assert response.status_code == 400
    assert "phones" in response.json()["errors"]


def test_another_organizations_group_is_an_unknown_group(api, org_b):
    theirs = ContactGroupFactory(organization=org_b)
    ContactFactory(organization=org_b, contact_group=theirs)

    response = api.post("/api/campaigns", body(contact_group=str(theirs.uuid)), format="json")

    assert response.status_code == 400
    assert "contact_group" in response.json()["errors"]


def test_an_empty_group_has_no_recipients(api, org_a):
    empty = ContactGroupFactory(organization=org_a)

    response = api.post("/api/campaigns", body(contact_group=str(empty.uuid)), format="json")

    assert response.status_code == 400
    assert response.json()["errors"]["contact_group"] == ["The contact group has no contacts."]


def test_a_known_template_checks_its_parameter_count(api, org_a):
    create_template(
        organization=org_a,
        name="order_update",
        language="en_US",
        status="APPROVED",
        category="UTILITY",
        components=[{"type": "BODY", "text": "Hello {{1}}"}],
    )

    response = api.post("/api/campaigns", body(phones=["+4915123456000"]), format="json")

    assert response.status_code == 400
    assert "template.components" in response.json()["errors"]
    assert not Campaign.objects.exists()


def test_another_organizations_campaign_is_not_found(api, api_b, cloud_org):
    uuid = api.post("/api/campaigns", body(phones=["+4915123456000"]), format="json").json()["id"]

    for path in (f"/api/campaigns/{uuid}", f"/api/campaigns/{uuid}/recipients"):
        assert api_b.get(path).status_code == 404
    assert api_b.post(f"/api/campaigns/{uuid}/cancel").status_code == 404
    assert api.get("/api/campaigns/not-a-uuid").status_code == 404


def test_the_list_has_live_counts_in_a_fixed_number_of_queries(
    api, cloud_org, graph, django_assert_num_queries
):
    for n in range(3):
        api.post("/api/campaigns", body(phones=[f"+491512345600{n}"]), format="json")
    run_tasks()

    # the count, the page with its counts (the token is cached)
    with django_assert_num_queries(2):
        response = api.get("/api/campaigns")
    page = response.json()
    assert page["meta"]["total"] == 3
    assert [c["sent"] for c in page["data"]] == [1, 1, 1]
    assert_documented(page, CampaignPage())
    assert_documented(api.get(f"/api/campaigns/{page['data'][0]['uuid']}").json(), CampaignDetail())


def test_the_recipient_page_has_a_fixed_number_of_queries(
    api, cloud_org, graph, django_assert_num_queries
):
    phones = [f"+49151234560{n:02d}" for n in range(12)]
    uuid = api.post("/api/campaigns", body(phones=phones), format="json").json()["id"]
    run_tasks()

    # the campaign, the count, the page with contacts and chats
    with django_assert_num_queries(3):
        response = api.get(f"/api/campaigns/{uuid}/recipients?per_page=20")
    assert len(response.json()["data"]) == 12
    assert_documented(response.json(), RecipientPage())


def test_the_data_functions_return_exactly_the_documented_fields(org_a):
    campaign = create_campaign_record(
        organization=org_a, name="x", template=TEMPLATE, phones=["+4915123456000"], rate=5
    )
    recipient = Recipient.objects.create(campaign=campaign, phone="4915123456000")

    annotated = campaigns_with_counts(Campaign.objects.all()).get()
    assert set(campaign_data(annotated)) == set(CampaignRecordSerializer().fields)
    assert set(recipient_data(recipient)) == set(RecipientRecordSerializer().fields)


def test_a_scheduled_campaign_waits_for_its_time(api, cloud_org, graph, group):
    later = timezone.now() + timedelta(hours=1)
    response = api.post(
        "/api/campaigns",
        body(contact_group=str(group.uuid), scheduled_at=later.isoformat()),
        format="json",
    )
    assert response.status_code == 200, response.json()
    uuid = response.json()["id"]
    run_tasks()

    data = api.get(f"/api/campaigns/{uuid}").json()["data"]
    assert (data["status"], data["total"], len(sends(graph))) == ("scheduled", 0, 0)

    from tests.background import make_due

    make_due()
    run_tasks()
    data = api.get(f"/api/campaigns/{uuid}").json()["data"]
    assert (data["status"], data["total"], len(sends(graph))) == ("completed", 3, 3)
