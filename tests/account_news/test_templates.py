"""Template news through the signed webhook (real payloads: see each payload file's
`_source`): the local template follows WhatsApp, GET /api/templates shows it, an event
tells the organization, and a template WhatsApp has not approved is not sent."""

import json

import pytest

from business_numbers import services as number_services
from business_numbers.gateway import sandbox
from business_numbers.models import MessageTemplate, Number
from contacts.models import Contact
from events import services as events
from sending import services
from sending.models import Chat
from tests.account_news.conftest import deliver, for_account, payload, value_of
from tests.channel import set_channel
from tests.events.conftest import run_all
from tests.factories import create_template

pytestmark = pytest.mark.django_db


def template_for(org, news: dict, **values) -> MessageTemplate:
    """The organization's synced copy of the template the news is about."""
    value = value_of(news)
    defaults = {
        "status": "APPROVED",
        "category": "UTILITY",
        "components": [{"type": "BODY", "text": "Your order {{1}} is on its way."}],
    }
    return create_template(
        organization=org,
        name=value["message_template_name"],
        language=value["message_template_language"].replace("-", "_"),  # as Graph lists it
        external_id=str(value["message_template_id"]),
        **{**defaults, **values},
    )


def test_a_paused_template_is_paused_with_its_reason_and_shown(news_org, api):
    news = payload("meta_template_status.json", "paused")
    for_account(news_org, news)
    template = template_for(news_org, news)
    processed = deliver(news_org, news).json()["processed"]
    assert processed["updates"] == 1 and processed["skipped"] == 0
    template.refresh_from_db()
    assert template.status == "PAUSED"
    assert template.reason.startswith("Your WhatsApp message template has been paused for 6 hours")
    assert template.category == "MARKETING"
    listed = api.get("/api/templates").json()["data"][0]
    assert (listed["status"], listed["quality"]) == ("PAUSED", None)
    assert listed["reason"] == template.reason


@pytest.mark.parametrize(
    ("name", "status", "reason"),
    [("disabled", "DISABLED", ""), ("rejected", "REJECTED", "INVALID_FORMAT")],
)
def test_disabled_and_rejected_templates(news_org, name, status, reason):
    news = payload("meta_template_status.json", name)
    for_account(news_org, news)
    template = template_for(news_org, news)
    deliver(news_org, news)
    template.refresh_from_db()
    assert (template.status, template.reason) == (status, reason)


def test_an_unpause_approves_it_again_and_clears_the_reason(news_org):
    paused = payload("meta_template_status.json", "paused")
    for_account(news_org, paused)
    template = template_for(news_org, paused)
    deliver(news_org, paused)
    deliver(news_org, payload("meta_template_status.json", "unpaused"))
    template.refresh_from_db()
    assert template.status == "APPROVED"
    assert template.reason == "Your WhatsApp message template has been unpaused."


def test_the_template_is_found_by_name_and_language_without_its_id(news_org):
    news = payload("pywa_templates.json", "status_approved")
    for_account(news_org, news)
    template = template_for(news_org, news, status="PENDING")
    MessageTemplate.objects.filter(pk=template.pk).update(external_id="")
    deliver(news_org, news)
    template.refresh_from_db()
    assert (template.status, template.reason) == ("APPROVED", "")


def test_quality_category_and_components(news_org):
    quality = payload("pywa_templates.json", "quality_yellow")
    category = payload("pywa_templates.json", "category_marketing")
    components = payload("pywa_templates.json", "components_element")
    for_account(news_org, quality)
    welcome = template_for(news_org, quality)
    deliver(news_org, quality)
    welcome.refresh_from_db()
    assert welcome.quality == "YELLOW"

    for_account(news_org, category)
    mine = template_for(news_org, category)
    deliver(news_org, category)
    deliver(news_org, components)
    mine.refresh_from_db()
    assert mine.category == "MARKETING"
    assert mine.component("BODY")["text"] == "Hi {{1}}! Welcome to our service."


def test_news_delivered_again_changes_nothing_and_emits_once(news_org, receiver):
    events.create_endpoint(
        organization=news_org, url=receiver.url, events=["template.status.update"]
    )
    news = payload("meta_template_status.json", "disabled")
    for_account(news_org, news)
    template_for(news_org, news)
    first = deliver(news_org, news).json()["processed"]
    again = deliver(news_org, news).json()["processed"]
    assert first["updates"] == 1
    assert again["duplicates"] == 1 and "updates" not in again
    run_all()
    assert receiver.wait_for(1)
    assert len(receiver.requests) == 1
    body = json.loads(receiver.requests[0].body)
    assert body["type"] == "template.status.update"
    assert (body["data"]["name"], body["data"]["status"]) == ("order_confirmation", "DISABLED")


def test_a_bad_change_beside_good_ones_is_skipped_alone(news_org):
    news = payload("meta_template_status.json", "disabled")
    for_account(news_org, news)
    template = template_for(news_org, news)
    good = news["entry"][0]["changes"][0]
    bad_event = {"field": good["field"], "value": {**good["value"], "event": ["DISABLED"]}}
    no_template = {"field": good["field"], "value": {"event": "PAUSED"}}
    bad_quality = {"field": "message_template_quality_update", "value": {"new_quality_score": 7}}
    news["entry"][0]["changes"] = [bad_event, no_template, good, bad_quality]
    response = deliver(news_org, news)
    assert response.status_code == 200
    processed = response.json()["processed"]
    assert (processed["skipped"], processed["updates"]) == (3, 1)
    template.refresh_from_db()
    assert template.status == "DISABLED"


def test_news_of_a_template_never_synced_changes_nothing(news_org):
    news = payload("meta_template_status.json", "paused")
    for_account(news_org, news)
    processed = deliver(news_org, news).json()["processed"]
    assert processed["skipped"] == 0
    assert not MessageTemplate.objects.exists()


def test_news_of_another_business_account_is_left_alone(news_org):
    news = payload("meta_template_status.json", "paused")
    for_account(news_org, news)
    template = template_for(news_org, news)
    news["entry"][0]["id"] = "999999999999999"
    processed = deliver(news_org, news).json()["processed"]
    assert processed["other_number"] == 1
    template.refresh_from_db()
    assert template.status == "APPROVED"


# Sending a template that is not approved -------------------------------------------------


def send(api, template: MessageTemplate):
    return api.post(
        "/api/send/template",
        {
            "phone": "+14155552671",
            "template": {
                "name": template.name,
                "language": {"code": template.language},
                "components": [{"type": "body", "parameters": [{"type": "text", "text": "A1"}]}],
            },
        },
        format="json",
    )


@pytest.mark.parametrize("status", ["PAUSED", "DISABLED", "REJECTED", "PENDING"])
def test_a_template_not_approved_is_refused_before_the_channel(org_a, api, status):
    sandbox.clear_outbox()
    template = create_template(
        organization=org_a,
        name="order_update",
        language="en_US",
        status=status,
        components=[{"type": "BODY", "text": "Your order {{1}} is on its way."}],
    )
    response = send(api, template)
    assert response.status_code == 422
    body = response.json()
    assert body["statusCode"] == 422 and status in body["message"]
    assert body["channel_error"]["code"] == "template_not_approved"
    assert body["channel_error"]["details"]["status"] == status
    assert sandbox.sent_messages() == []
    assert not Chat.objects.exists() and not Contact.objects.exists()


def test_the_same_template_approved_again_is_sent(news_org, api):
    news = payload("meta_template_status.json", "paused")
    for_account(news_org, news)
    template = template_for(news_org, news)
    deliver(news_org, news)
    assert send(api, template).status_code == 422
    deliver(news_org, payload("meta_template_status.json", "unpaused"))
    # The organization sends through the sandbox; its channel row only receives news.
    set_channel(news_org, kind="sandbox", phone_number_id="")
    assert send(api, template).status_code == 200


def test_campaigns_preparing_a_send_get_the_refusal(org_a):
    create_template(
        organization=org_a, name="promo", language="en", status="DISABLED", components=[]
    )
    template = {"name": "promo", "language": {"code": "en"}}
    with pytest.raises(number_services.TemplateNotApproved) as refused:
        services.prepare_template_send(
            organization=org_a, number=Number.objects.default_for(org_a), template=template
        )
    assert refused.value.status == "DISABLED"
    with pytest.raises(number_services.TemplateNotApproved):
        number_services.check_template(number=Number.objects.default_for(org_a), template=template)
