"""Inbound messages, statuses, auto-replies and account news reach the number they name
(docs/numbers.md), through the signed webhook, with real payloads."""

import pytest

from business_numbers import services as number_services
from business_numbers.models import Number
from canned_replies import services as reply_services
from sending.models import Chat, Conversation
from tests.account_news.conftest import account_of, for_account, payload, value_of
from tests.background import run_tasks
from tests.channel import set_channel, stored_channel
from tests.inbound.conftest import APP_SECRET, deliver, envelope, status, statuses, text_message

pytestmark = pytest.mark.django_db(transaction=True)

SALES_ID = "106540352242922"
SUPPORT_ID = "106540352242999"
HEALTH = "meta_number_health.json"


@pytest.fixture
def two_numbers(cloud_org):
    """Organization A with Sales (its default) and Support, able to receive webhooks."""
    set_channel(cloud_org, app_secret=APP_SECRET)
    support = number_services.create_number(
        organization=cloud_org,
        label="Support",
        phone_number_id=SUPPORT_ID,
        access_token="EAAG-support",
        business_account_id="102290129340398",
    )
    return Number.objects.get(organization=cloud_org, is_default=True), support


def to_number(payload: dict, phone_number_id: str) -> dict:
    for entry in payload["entry"]:
        for change in entry["changes"]:
            change["value"]["metadata"]["phone_number_id"] = phone_number_id
    return payload


def test_a_message_to_each_number_is_its_and_answered_from_it(two_numbers, graph):
    sales, support = two_numbers
    reply_services.create_canned_reply(
        organization=sales.organization,
        name="hours",
        trigger="hours",
        match_criteria="contains",
        response="9 to 5",
    )
    for phone_number_id, wam_id in ((SALES_ID, "wamid.S1"), (SUPPORT_ID, "wamid.P1")):
        message = text_message("hours?", sender="4915112345678", wam_id=wam_id)
        response = deliver(sales.organization, to_number(envelope(message), phone_number_id))
        assert response.json()["processed"]["messages"] == 1
    assert run_tasks() == 2

    inbound = dict(Chat.objects.filter(type="inbound").values_list("wam_id", "number_id"))
    assert inbound == {"wamid.S1": sales.pk, "wamid.P1": support.pk}
    replies = [r.path.split("/")[2] for r in graph.requests if r.path.endswith("/messages")]
    assert sorted(replies) == sorted([SALES_ID, SUPPORT_ID])
    # One conversation per contact and number, each holding its messages and its reply.
    assert Conversation.objects.count() == 2
    for conversation in Conversation.objects.all():
        assert {c.number_id for c in conversation.chats.all()} == {conversation.number_id}
        assert conversation.chats.count() == 2


def test_a_message_for_a_number_the_organization_deleted_is_left_alone(two_numbers):
    sales, support = two_numbers
    number_services.delete_number(number=support)
    message = text_message("hi", wam_id="wamid.GONE")
    processed = deliver(sales.organization, to_number(envelope(message), SUPPORT_ID)).json()
    assert processed["processed"]["other_number"] == 1
    assert not Chat.objects.exists()


def test_statuses_find_their_chat_whichever_number_sent_it(two_numbers, graph, api):
    sales, support = two_numbers
    sent = api.post("/api/send", {"phone": "+4915112345678", "message": "Hi", "from": "Support"})
    assert sent.status_code == 400  # a label is not a way to name a number
    sent = api.post("/api/send", {"phone": "+4915112345678", "message": "Hi", "from": SUPPORT_ID})
    assert sent.status_code == 200, sent.json()
    wam_id = sent.json()["data"]["data"]["messages"][0]["id"]
    update = to_number(envelope(statuses(status(wam_id, "delivered", 1_700_000_000))), SUPPORT_ID)
    assert deliver(sales.organization, update).json()["processed"]["statuses"] == 1
    assert Chat.objects.get(wam_id=wam_id).status == "delivered"


def test_news_for_a_shared_business_account_reaches_only_the_number_it_names(two_numbers, org_b):
    """Two organizations share one business account. A's display number is not known yet;
    a quality update naming B's number, posted to A's URL, must not make A take it."""
    sales, _ = two_numbers
    news = payload(HEALTH, "quality_flagged")
    b_display = value_of(news)["display_phone_number"]
    for_account(sales.organization, news)
    set_channel(
        org_b,
        kind="cloud_api",
        phone_number_id="106540352240000",
        business_account_id=account_of(news),
        display_phone_number=b_display,
        quality_rating="GREEN",
    )
    processed = deliver(sales.organization, news).json()["processed"]
    assert processed["other_number"] == 1
    mine = stored_channel(sales.organization)
    assert (mine.display_phone_number, mine.quality_rating) == ("", "UNKNOWN")
    assert Number.objects.get(organization=org_b).quality_rating == "GREEN"


def test_news_naming_a_number_goes_to_the_number_showing_it(two_numbers):
    sales, support = two_numbers
    news = payload(HEALTH, "quality_flagged")
    for_account(sales.organization, news)
    Number.objects.filter(pk=sales.pk).update(display_phone_number="15550001111")
    Number.objects.filter(pk=support.pk).update(
        display_phone_number=value_of(news)["display_phone_number"]
    )
    assert deliver(sales.organization, news).json()["processed"]["updates"] == 1
    assert Number.objects.get(pk=support.pk).quality_rating == "RED"
    assert Number.objects.get(pk=sales.pk).quality_rating == "UNKNOWN"


def test_a_display_number_nobody_shows_is_not_guessed_among_several(two_numbers):
    sales, support = two_numbers
    news = payload(HEALTH, "quality_flagged")
    for_account(sales.organization, news)
    processed = deliver(sales.organization, news).json()["processed"]
    assert processed["other_number"] == 1  # both numbers' display numbers are unknown
    assert set(Number.objects.values_list("quality_rating", flat=True)) == {"UNKNOWN"}
