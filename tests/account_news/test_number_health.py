"""The number's health through the signed webhook (real payloads: see each payload file's
`_source`): kept on the organization's channel, shown by GET /api/channel, told by
channel.updated; news delivered again changes nothing."""

import json

import pytest

from business_numbers.models import Number
from events import services as events
from tests.account_news.conftest import APP_SECRET, deliver, for_account, payload, value_of
from tests.channel import set_channel, stored_channel
from tests.events.conftest import run_all

pytestmark = pytest.mark.django_db

HEALTH = "meta_number_health.json"
ACCOUNT = "pywa_account_update.json"


def channel_after(org, news, **values) -> Number:
    for_account(org, news, **values)
    response = deliver(org, news)
    assert response.status_code == 200, response.content
    assert response.json()["processed"]["skipped"] == 0
    return stored_channel(org)


def test_a_flagged_number_is_red_with_its_limit(news_org, api):
    channel = channel_after(news_org, payload(HEALTH, "quality_flagged"))
    assert (channel.quality_rating, channel.messaging_limit) == ("RED", "TIER_10K")
    assert channel.display_phone_number == "124545784358810"
    assert channel.health_updated_at is not None
    data = api.get("/api/channel").json()["data"]
    assert data["quality_rating"] == "RED" and data["messaging_limit"] == "TIER_10K"
    assert data["display_phone_number"] == "124545784358810"
    assert data["updated_at"].endswith("Z")


def test_a_throughput_upgrade_is_unlimited(news_org):
    channel = channel_after(news_org, payload(HEALTH, "quality_throughput_upgrade"))
    assert channel.messaging_limit == "TIER_UNLIMITED"
    assert channel.quality_rating == "UNKNOWN"  # the event says nothing of the quality


def test_quality_news_for_another_number_of_the_account_is_left_alone(news_org):
    news = payload(HEALTH, "quality_flagged")
    for_account(news_org, news, display_phone_number="15550783881")
    processed = deliver(news_org, news).json()["processed"]
    assert processed["other_number"] == 1
    assert stored_channel(news_org).quality_rating == "UNKNOWN"


def test_an_approved_name_is_the_verified_name(news_org):
    channel = channel_after(news_org, payload(HEALTH, "name_approved"))
    assert channel.verified_name == "Lucky Shrub"
    assert channel.display_phone_number == "15550783881"


def test_the_business_capability_is_the_messaging_limit(news_org):
    assert channel_after(news_org, payload(HEALTH, "capability")).messaging_limit == "TIER_2K"


def test_unlimited_capability_of_older_versions(news_org):
    news = payload(HEALTH, "capability")
    # The reference's older parameter: -1 is unlimited.
    news["entry"][0]["changes"][0]["value"] = {"max_daily_conversation_per_phone": -1}
    assert channel_after(news_org, news).messaging_limit == "TIER_UNLIMITED"


def test_an_account_review_approval_makes_it_active(news_org):
    assert channel_after(news_org, payload(HEALTH, "review_approved")).account_status == "ACTIVE"


def test_account_alerts_are_kept_newest_first(news_org):
    channel = channel_after(news_org, payload(HEALTH, "alert_deferred"))
    [alert] = channel.alerts
    assert alert["alert_type"] == "INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED"
    assert alert["alert_severity"] == "WARNING"


def test_a_restricted_account_and_its_restrictions(news_org, api):
    channel = channel_after(news_org, payload(ACCOUNT, "account_restriction"))
    assert channel.account_status == "RESTRICTED"
    assert [r["restriction_type"] for r in channel.restrictions] == [
        "RESTRICTED_BIZ_INITIATED_MESSAGING",
        "RESTRICTED_ADD_PHONE_NUMBER_ACTION",
    ]
    data = api.get("/api/channel").json()["data"]
    assert data["account_status"] == "RESTRICTED"
    assert data["restrictions"][0] == {
        "restriction_type": "RESTRICTED_BIZ_INITIATED_MESSAGING",
        "expiration": 1641330498,
    }


def test_a_ban_then_its_reinstatement(news_org):
    reinstated = payload(ACCOUNT, "account_disabled")
    banned = json.loads(json.dumps(reinstated))
    # The same event with the ban's other state (docs: DISABLE, REINSTATE, SCHEDULE_FOR_DISABLE).
    banned["entry"][0]["changes"][0]["value"]["ban_info"]["waba_ban_state"] = "DISABLE"
    assert channel_after(news_org, banned).account_status == "BANNED"
    channel = channel_after(news_org, reinstated)
    assert channel.account_status == "ACTIVE" and channel.restrictions == []


@pytest.mark.parametrize(
    ("name", "status"), [("account_deleted", "DELETED"), ("account_reconnected", "ACTIVE")]
)
def test_account_events_that_are_a_status(news_org, name, status):
    assert channel_after(news_org, payload(ACCOUNT, name)).account_status == status


@pytest.mark.parametrize("name", ["account_violation", "primary_business_location_set"])
def test_account_events_without_health_change_nothing(news_org, name):
    channel = channel_after(news_org, payload(ACCOUNT, name))
    assert channel.account_status == "" and channel.health_updated_at is None


def test_news_of_another_business_account_is_left_alone(news_org):
    news = payload(ACCOUNT, "partner_added")
    for_account(news_org, payload(ACCOUNT, "account_restriction"))  # 102290129340398
    processed = deliver(news_org, news).json()["processed"]
    assert processed["other_number"] == 1


def test_redelivery_changes_nothing_and_emits_once(news_org, receiver):
    events.create_endpoint(organization=news_org, url=receiver.url, events=["channel.updated"])
    news = payload(HEALTH, "quality_flagged")
    for_account(news_org, news)
    assert deliver(news_org, news).json()["processed"]["updates"] == 1
    updated_at = stored_channel(news_org).health_updated_at
    assert deliver(news_org, news).json()["processed"]["duplicates"] == 1
    assert stored_channel(news_org).health_updated_at == updated_at
    run_all()
    assert receiver.wait_for(1)
    assert len(receiver.requests) == 1
    body = json.loads(receiver.requests[0].body)
    assert body["type"] == "channel.updated"
    assert body["data"]["quality_rating"] == "RED"
    assert set(body["data"]) >= {"phone_number_id", "messaging_limit", "restrictions"}


def test_a_bad_change_beside_good_ones_is_skipped_alone(news_org):
    news = payload(HEALTH, "quality_flagged")
    for_account(news_org, news)
    good = news["entry"][0]["changes"][0]
    news["entry"][0]["changes"] = [
        {
            "field": "phone_number_quality_update",
            "value": {**good["value"], "current_limit": "lots"},
        },
        {"field": "account_update", "value": {"event": "DISABLED_UPDATE", "ban_info": "x"}},
        {"field": "phone_number_name_update", "value": {"decision": None}},
        {"field": "account_alerts", "value": {"alert_info": {"alert_type": ["x"]}}},
        good,
    ]
    response = deliver(news_org, news)
    assert response.status_code == 200
    processed = response.json()["processed"]
    assert (processed["skipped"], processed["updates"]) == (4, 1)
    assert stored_channel(news_org).quality_rating == "RED"


def test_a_sandbox_organization_keeps_the_news_too(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    news = payload(HEALTH, "name_approved")
    deliver(org_a, news)
    assert stored_channel(org_a).verified_name == value_of(news)["requested_verified_name"]
