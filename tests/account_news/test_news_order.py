"""News in order: WhatsApp promises no order and retries a delivery for days, so news
older (by its entry's `time`, else its own `timestamp`) than what a template or number
already knows changes nothing and counts as a duplicate; news of the same time applies.
Real payloads (each file's `_source`) through the signed webhook."""

import copy

import pytest

from business_numbers.models import MessageTemplate
from tests.account_news.conftest import deliver, for_account, payload
from tests.account_news.test_templates import template_for
from tests.channel import stored_channel

pytestmark = pytest.mark.django_db

HOUR = 3600


def at(news: dict, time: int | None) -> dict:
    """The news with its entry's `time` (none: without one)."""
    news = copy.deepcopy(news)
    if time is None:
        del news["entry"][0]["time"]
    else:
        news["entry"][0]["time"] = time
    return news


def processed(org, news) -> dict:
    response = deliver(org, news)
    assert response.status_code == 200, response.content
    return response.json()["processed"]


def test_an_hour_old_approval_after_a_newer_pause_changes_nothing(news_org):
    paused = payload("meta_template_status.json", "paused")
    approved = payload("meta_template_status.json", "unpaused")
    for_account(news_org, paused)
    template = template_for(news_org, paused)
    now = paused["entry"][0]["time"]

    assert processed(news_org, at(paused, now))["updates"] == 1
    replayed = processed(news_org, at(approved, now - HOUR))
    assert replayed["duplicates"] == 1 and "updates" not in replayed

    template.refresh_from_db()
    assert template.status == "PAUSED"
    assert template.reason.startswith("Your WhatsApp message template has been paused")


def test_newer_and_same_time_news_apply(news_org):
    paused = payload("meta_template_status.json", "paused")
    approved = payload("meta_template_status.json", "unpaused")
    for_account(news_org, paused)
    template = template_for(news_org, paused)
    now = paused["entry"][0]["time"]

    processed(news_org, at(paused, now))
    assert processed(news_org, at(approved, now))["updates"] == 1  # the same second
    template.refresh_from_db()
    assert template.status == "APPROVED"
    assert processed(news_org, at(paused, now + 1))["updates"] == 1
    template.refresh_from_db()
    assert template.status == "PAUSED"


def test_older_news_of_another_field_still_applies(news_org):
    """Each field keeps its own news time: a newer quality update does not hide an
    older status update that nobody superseded."""
    quality = payload("pywa_templates.json", "quality_yellow")
    for_account(news_org, quality)
    template = template_for(news_org, quality, status="PENDING")
    status = copy.deepcopy(quality)
    status["entry"][0]["changes"][0] = {
        "field": "message_template_status_update",
        "value": {
            "event": "APPROVED",
            **{k: v for k, v in quality["entry"][0]["changes"][0]["value"].items() if "_id" in k},
        },
    }
    now = quality["entry"][0]["time"]
    processed(news_org, at(quality, now))
    assert processed(news_org, at(status, now - HOUR))["updates"] == 1
    template.refresh_from_db()
    assert (template.status, template.quality) == ("APPROVED", "YELLOW")


def test_old_news_of_what_is_already_known_still_holds_back_older_news(news_org):
    """A pause told again later (the template paused already) moves the known time on:
    an approval older than it changes nothing."""
    paused = payload("meta_template_status.json", "paused")
    approved = payload("meta_template_status.json", "unpaused")
    for_account(news_org, paused)
    template = template_for(news_org, paused)
    now = paused["entry"][0]["time"]
    processed(news_org, at(paused, now - 2 * HOUR))
    assert processed(news_org, at(paused, now))["duplicates"] == 1
    assert processed(news_org, at(approved, now - HOUR))["duplicates"] == 1
    template.refresh_from_db()
    assert template.status == "PAUSED"


def test_without_an_entry_time_the_changes_own_timestamp_orders_it(news_org):
    paused = payload("meta_template_status.json", "paused")
    approved = payload("meta_template_status.json", "unpaused")
    for_account(news_org, paused)
    template = template_for(news_org, paused)
    now = paused["entry"][0]["time"]
    processed(news_org, at(paused, now))
    old = at(approved, None)
    old["entry"][0]["changes"][0]["value"]["timestamp"] = str(now - HOUR)
    assert processed(news_org, old)["duplicates"] == 1
    template.refresh_from_db()
    assert template.status == "PAUSED"


def test_news_with_no_time_at_all_applies(news_org):
    paused = payload("meta_template_status.json", "paused")
    approved = payload("meta_template_status.json", "unpaused")
    for_account(news_org, paused)
    template = template_for(news_org, paused)
    processed(news_org, paused)
    assert processed(news_org, at(approved, None))["updates"] == 1
    template.refresh_from_db()
    assert template.status == "APPROVED"
    assert (
        MessageTemplate.objects.get(pk=template.pk).news_times["status"]
        == (paused["entry"][0]["time"])
    )


def test_an_older_quality_update_does_not_undo_a_newer_flag(news_org):
    flagged = payload("meta_number_health.json", "quality_flagged")
    for_account(news_org, flagged)
    now = flagged["entry"][0]["time"]
    processed(news_org, at(flagged, now))
    unflagged = at(flagged, now - HOUR)
    value = unflagged["entry"][0]["changes"][0]["value"]
    value["event"] = "UNFLAGGED"
    value.pop("max_daily_conversations_per_business", None)
    value["current_limit"] = "TIER_250"
    replayed = processed(news_org, unflagged)
    assert replayed["duplicates"] == 1 and "updates" not in replayed
    channel = stored_channel(news_org)
    assert (channel.quality_rating, channel.messaging_limit) == ("RED", "TIER_10K")


def test_an_old_reinstatement_does_not_lift_a_newer_restriction(news_org):
    restricted = payload("pywa_account_update.json", "account_restriction")
    reinstated = payload("pywa_account_update.json", "account_disabled")  # REINSTATE
    for_account(news_org, restricted)
    now = reinstated["entry"][0]["time"]
    processed(news_org, at(restricted, now))
    assert processed(news_org, at(reinstated, now - HOUR))["duplicates"] == 1
    channel = stored_channel(news_org)
    assert channel.account_status == "RESTRICTED" and len(channel.restrictions) == 2
    # Newer: applied.
    assert processed(news_org, at(reinstated, now + HOUR))["updates"] == 1
    channel = stored_channel(news_org)
    assert channel.account_status == "ACTIVE" and channel.restrictions == []


def test_an_old_name_and_an_old_limit_change_nothing(news_org):
    name = payload("meta_number_health.json", "name_approved")
    capability = payload("meta_number_health.json", "capability")  # TIER_2K
    capability["entry"][0]["id"] = name["entry"][0]["id"]  # one business account
    for_account(news_org, name)
    now = 1_800_000_000
    processed(news_org, at(name, now))
    processed(news_org, at(capability, now))
    older_name = at(name, now - HOUR)
    older_name["entry"][0]["changes"][0]["value"]["requested_verified_name"] = "Old Name"
    older_limit = at(capability, now - HOUR)
    older_limit["entry"][0]["changes"][0]["value"] = {"max_daily_conversation_per_phone": 250}
    assert processed(news_org, older_name)["duplicates"] == 1
    assert processed(news_org, older_limit)["duplicates"] == 1
    channel = stored_channel(news_org)
    assert (channel.verified_name, channel.messaging_limit) == ("Lucky Shrub", "TIER_2K")
