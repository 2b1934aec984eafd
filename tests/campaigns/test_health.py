"""Campaigns that respect the number (): paused by a template no longer
approved, a quality RED or a restricted account, resumed by hand; at most the messaging
limit's new conversations in a rolling 24 hours, the rest `waiting`; unknown sends settled
by their status webhooks (biz_opaque_callback_data) and sent again by retry-unknown."""

import copy
import json
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from business_numbers.models import MessageTemplate, Number
from campaigns import pacing, settlement
from campaigns import sender as sender_module
from campaigns.limits import wake_waiting
from campaigns.models import Campaign, NewConversation, Recipient, RecipientStatus
from campaigns.recipients import mark_dead_claims_unknown
from campaigns.settlement import callback_data
from campaigns.tasks import resume_campaigns
from sending.models import Chat
from tests.background import run_tasks
from tests.campaigns.conftest import body, sends
from tests.channel import set_channel
from tests.databases import on_postgresql
from tests.factories import create_template
from tests.inbound.conftest import APP_SECRET, deliver

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).parent.parent / "inbound" / "payloads"


def numbers(count: int) -> list[str]:
    return [f"+4915123{n:06d}" for n in range(count)]


def create(api, **values):
    response = api.post("/api/campaigns", body(**values), format="json")
    assert response.status_code == 200, response.json()
    return response.json()["id"]


def shown(api, uuid):
    return api.get(f"/api/campaigns/{uuid}").json()["data"]


def statuses_of(campaign_uuid) -> dict[str, int]:
    counts: dict[str, int] = {}
    for status in Recipient.objects.filter(campaign__uuid=campaign_uuid).values_list(
        "status", flat=True
    ):
        counts[status] = counts.get(status, 0) + 1
    return counts


def health(organization, **values):
    Number.objects.filter(organization=organization).update(**values)


def after_claims(monkeypatch, count: int, then) -> None:
    """`then()` as the senders claim their `count`-th batch: something that
    happens mid-campaign, in the sender's own thread (SQLite's test transaction)."""
    claim = sender_module.claim_batch
    claims = []
    monkeypatch.setattr(sender_module, "HEALTH_EVERY", 0)  # read before every batch
    # No turn missed on a busy machine (it would be taken again after the pause): these
    # tests count the sends made before it.
    monkeypatch.setattr(pacing, "LEEWAY", timedelta(minutes=1))

    def counted(sender, size):
        claims.append(size)
        if len(claims) == count:  # this batch was let through; the next is not
            then()
        return claim(sender, size)

    monkeypatch.setattr(sender_module, "claim_batch", counted)


def tracked_status(wam_id: str, name: str, callback: str, recipient: str) -> dict:
    """pywa's real `with_tracker` status webhook (a status carrying the send's
    biz_opaque_callback_data; tests/inbound/payloads/pywa_statuses.json names its
    source), for another message, status, callback data and recipient."""
    fixtures = json.loads((PAYLOADS / "pywa_statuses.json").read_text())
    payload = copy.deepcopy(fixtures["payloads"]["with_tracker"])
    value = payload["entry"][0]["changes"][0]["value"]
    value["metadata"]["phone_number_id"] = (
        Number.objects.exclude(phone_number_id="").get().phone_number_id
    )
    item = value["statuses"][0]
    item.update(
        id=wam_id,
        status=name,
        biz_opaque_callback_data=callback,
        recipient_id=recipient,
        timestamp=str(int(timezone.now().timestamp())),
    )
    return payload


def test_quality_red_mid_campaign_pauses_it_with_no_further_call_and_resume_continues(
    api, cloud_org, graph, monkeypatch
):
    after_claims(monkeypatch, 2, lambda: health(cloud_org, quality_rating="RED"))
    uuid = create(api, phones=numbers(30), rate=10)  # one recipient a batch
    run_tasks()

    data = shown(api, uuid)
    assert (data["status"], data["paused_reason"]) == ("paused", "quality_red")
    # The pause, found before the third batch, stops every send of the two batches let
    # through whose thread had not yet left at its turn (the second's turn is a tenth of
    # a second on): how many left first depends on the machine's speed.
    sent_when_paused = len(sends(graph))
    assert sent_when_paused in (0, 1, 2)
    assert data["failed"] == 0 and data["sent"] == sent_when_paused
    assert data["pending"] == 30 - sent_when_paused
    run_tasks()  # nothing runs for a paused campaign (the minutely look included)
    resume_campaigns.call()
    run_tasks()
    assert len(sends(graph)) == sent_when_paused

    response = api.post(f"/api/campaigns/{uuid}/resume")
    assert response.status_code == 409
    assert response.json() == {
        "statusCode": 409,
        "message": "The campaign stays paused: The number's quality rating is still RED.",
    }
    health(cloud_org, quality_rating="GREEN")
    for _ in range(2):  # twice: the second changes nothing
        response = api.post(f"/api/campaigns/{uuid}/resume")
        assert response.status_code == 200, response.json()
        assert response.json()["id"] == uuid
    run_tasks()

    data = shown(api, uuid)
    assert (data["status"], data["paused_reason"], data["sent"]) == ("completed", None, 30)
    to = [r.json["to"] for r in sends(graph)]
    assert len(to) == len(set(to)) == 30


def test_a_template_disabled_mid_campaign_pauses_it(api, cloud_org, graph, monkeypatch):
    template = create_template(
        organization=cloud_org, name="order_update", language="en_US", status="APPROVED"
    )
    after_claims(
        monkeypatch,
        1,
        lambda: MessageTemplate.objects.filter(pk=template.pk).update(status="DISABLED"),
    )
    uuid = create(api, phones=numbers(10), rate=10)
    run_tasks()

    data = shown(api, uuid)
    assert (data["status"], data["paused_reason"]) == ("paused", "template_not_approved")
    assert (len(sends(graph)), data["failed"], data["pending"]) == (1, 0, 9)
    response = api.post(f"/api/campaigns/{uuid}/resume")
    assert response.status_code == 409
    assert "template is not approved" in response.json()["message"]

    MessageTemplate.objects.filter(pk=template.pk).update(status="APPROVED")
    assert api.post(f"/api/campaigns/{uuid}/resume").status_code == 200
    run_tasks()
    assert shown(api, uuid)["status"] == "completed"
    assert len(sends(graph)) == 10


def test_a_restricted_account_pauses_a_campaign_before_its_first_send(api, cloud_org, graph):
    health(cloud_org, account_status="RESTRICTED")
    uuid = create(api, phones=numbers(3))
    run_tasks()

    data = shown(api, uuid)
    assert (data["status"], data["paused_reason"], data["pending"]) == (
        "paused",
        "account_restricted",
        3,
    )
    assert sends(graph) == []


def test_resume_is_refused_for_a_campaign_that_is_not_paused(api, api_b, cloud_org, graph):
    uuid = create(api, phones=numbers(2))
    run_tasks()
    response = api.post(f"/api/campaigns/{uuid}/resume")
    assert response.status_code == 409
    assert response.json()["message"] == (
        "Only a paused campaign can be resumed; this one is completed."
    )
    # Another organization's campaign is not found, for both actions.
    assert api_b.post(f"/api/campaigns/{uuid}/resume").status_code == 404
    assert api_b.post(f"/api/campaigns/{uuid}/retry-unknown").status_code == 404


def test_cancel_a_paused_campaign_skips_the_rest(api, cloud_org, graph):
    health(cloud_org, quality_rating="RED")
    uuid = create(api, phones=numbers(3))
    run_tasks()
    assert api.post(f"/api/campaigns/{uuid}/cancel").status_code == 200
    data = shown(api, uuid)
    assert (data["status"], data["skipped"], data["pending"]) == ("cancelled", 3, 0)


def test_a_messaging_limit_of_50_starts_50_new_conversations_and_the_rest_wait(
    api, cloud_org, graph
):
    # TIER_50, WhatsApp's smallest tier: its 60 recipients cross many batches, as
    # TIER_250's 300 would, in a fifth of the time.
    health(cloud_org, messaging_limit="TIER_50")
    uuid = create(api, phones=numbers(60))
    run_tasks()

    assert len(sends(graph)) == 50
    data = shown(api, uuid)
    assert (data["status"], data["sent"], data["waiting"], data["pending"]) == (
        "running",
        50,
        10,
        0,
    )
    # Still full within the day: the minutely task leaves them waiting.
    resume_campaigns.call()
    run_tasks()
    assert len(sends(graph)) == 50

    # A day later the window has room again.
    NewConversation.objects.update(started_at=timezone.now() - timedelta(hours=25))
    Chat.objects.update(created_at=timezone.now() - timedelta(hours=25))
    resume_campaigns.call()
    run_tasks()
    data = shown(api, uuid)
    assert (data["status"], data["sent"], data["waiting"]) == ("completed", 60, 0)
    to = [r.json["to"] for r in sends(graph)]
    assert len(to) == len(set(to)) == 60


def test_numbers_messaged_in_the_last_day_do_not_count_against_the_limit(api, cloud_org, graph):
    uuid = create(api, phones=numbers(3))  # no limit known: all three go
    run_tasks()
    assert shown(api, uuid)["sent"] == 3

    health(cloud_org, messaging_limit="TIER_250")
    NewConversation.objects.bulk_create(
        NewConversation(
            organization=cloud_org,
            number=Number.objects.default_for(cloud_org),
            phone=f"1{n:09d}",
            started_at=timezone.now(),
        )
        for n in range(250)
    )
    again = create(api, phones=numbers(5))
    run_tasks()
    data = shown(api, again)
    # The three messaged today go; the two new ones wait for the full window.
    assert (data["sent"], data["waiting"]) == (3, 2)
    assert len(sends(graph)) == 6


def test_conversations_started_with_no_limit_count_toward_the_limit_that_follows(
    api, cloud_org, graph
):
    """650 sent while the limit was unknown, then WhatsApp says 250: the day is full.
    (Here 5, then a limit of 3.)"""
    first = create(api, phones=numbers(5))  # no limit known: all five go
    run_tasks()
    assert shown(api, first)["sent"] == 5
    assert NewConversation.objects.count() == 5

    health(cloud_org, messaging_limit="TIER_3")
    later = create(api, phones=[f"+4915199{n:06d}" for n in range(2)])
    run_tasks()
    data = shown(api, later)
    assert (data["status"], data["sent"], data["waiting"]) == ("running", 0, 2)
    assert len(sends(graph)) == 5

    # A day later the window has room again.
    NewConversation.objects.update(started_at=timezone.now() - timedelta(hours=25))
    resume_campaigns.call()
    run_tasks()
    assert shown(api, later)["sent"] == 2


def test_waiting_recipients_wake_for_an_unlimited_number(api, cloud_org, graph):
    health(cloud_org, messaging_limit="TIER_250")
    NewConversation.objects.bulk_create(
        NewConversation(
            organization=cloud_org,
            number=Number.objects.default_for(cloud_org),
            phone=f"1{n:09d}",
            started_at=timezone.now(),
        )
        for n in range(250)
    )
    uuid = create(api, phones=numbers(2))
    run_tasks()
    assert shown(api, uuid)["waiting"] == 2

    health(cloud_org, messaging_limit="TIER_UNLIMITED")
    assert wake_waiting() == 2
    resume_campaigns.call()
    run_tasks()
    assert shown(api, uuid)["status"] == "completed"
    assert len(sends(graph)) == 2


def test_every_campaign_message_names_its_recipient_and_attempt(api, cloud_org, graph):
    create(api, phones=numbers(2))
    run_tasks()
    recipients = {r.phone: r for r in Recipient.objects.all()}
    assert {r.json["biz_opaque_callback_data"] for r in sends(graph)} == {
        f"campaign-recipient:{r.pk}:1" for r in recipients.values()
    }


def test_a_status_webhook_settles_an_unknown_recipient(api, cloud_org, graph):
    set_channel(cloud_org, app_secret=APP_SECRET)
    uuid = create(api, phones=numbers(2))
    run_tasks()
    recipient = Recipient.objects.order_by("id").first()
    # As a worker that died after the request went out leaves it: no chat recorded.
    Chat.objects.filter(pk=recipient.chat_id).delete()
    Recipient.objects.filter(pk=recipient.pk).update(status=RecipientStatus.UNKNOWN, chat=None)
    callback = f"campaign-recipient:{recipient.pk}:1"
    assert shown(api, uuid)["unknown"] == 1

    response = deliver(cloud_org, tracked_status("wamid.LOST1", "delivered", callback, "x"))
    assert response.status_code == 200

    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.SENT
    chat = Chat.objects.get(pk=recipient.chat_id)
    assert (chat.wam_id, chat.status, chat.contact.phone) == (
        "wamid.LOST1",
        "delivered",
        recipient.phone,
    )
    data = shown(api, uuid)
    assert (data["unknown"], data["sent"], data["delivered"]) == (0, 2, 1)
    # Delivered again: nothing changes.
    assert (
        deliver(cloud_org, tracked_status("wamid.LOST1", "delivered", callback, "x")).status_code
        == 200
    )
    assert Chat.objects.filter(wam_id="wamid.LOST1").count() == 1


def test_a_timed_out_recipient_is_settled_in_its_own_chat_without_a_failed_twin(
    api, cloud_org, graph, settings
):
    """A send that got no answer recorded a failed chat with no message id; its `sent`
    status gives that chat WhatsApp's id instead of recording a second chat."""
    set_channel(cloud_org, app_secret=APP_SECRET)
    settings.WHATSAPP_TIMEOUT = 0.3
    graph.reply(status=200, json=None, delay=1)
    uuid = create(api, phones=numbers(1))
    run_tasks()
    recipient = Recipient.objects.get()
    assert recipient.status == RecipientStatus.UNKNOWN
    [failed] = Chat.objects.all()
    assert (failed.status, failed.wam_id, recipient.chat_id) == ("failed", None, failed.pk)

    callback = callback_data(recipient)
    response = deliver(cloud_org, tracked_status("wamid.SLOW1", "sent", callback, "x"))
    assert response.status_code == 200

    [chat] = Chat.objects.all()
    assert (chat.pk, chat.wam_id, chat.status) == (failed.pk, "wamid.SLOW1", "sent")
    assert (chat.error_code, chat.error_title, chat.error_details) == (None, "", None)
    recipient.refresh_from_db()
    assert (recipient.status, recipient.chat_id, recipient.error) == ("sent", chat.pk, "")
    assert (shown(api, uuid)["unknown"], shown(api, uuid)["sent"]) == (0, 1)
    # Delivered again: nothing changes.
    deliver(cloud_org, tracked_status("wamid.SLOW1", "sent", callback, "x"))
    assert Chat.objects.count() == 1


def test_a_status_for_an_earlier_attempt_or_another_campaign_settles_nothing(api, cloud_org, graph):
    set_channel(cloud_org, app_secret=APP_SECRET)
    create(api, phones=numbers(1))
    run_tasks()
    recipient = Recipient.objects.get()
    Recipient.objects.filter(pk=recipient.pk).update(status=RecipientStatus.UNKNOWN, chat=None)
    for callback in (f"campaign-recipient:{recipient.pk}:7", "campaign-recipient:x", "other"):
        deliver(cloud_org, tracked_status(f"wamid.{callback}", "sent", callback, "x"))
    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.UNKNOWN


def test_a_status_before_its_chat_looks_for_unknown_recipients_in_one_round_trip(
    api, cloud_org, graph, django_assert_num_queries
):
    """The usual case at a high rate: a campaign message's status comes before the sender
    recorded its chat, and names a recipient that is not unknown."""
    from datetime import UTC, datetime

    from sending.recorded import StatusesKept
    from sending.services import StatusUpdate

    create(api, phones=numbers(1))
    run_tasks()
    recipient = Recipient.objects.get()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    updates = [
        StatusUpdate(f"wamid.EARLY{n}", "sent", at, callback_data=f"campaign-recipient:{pk}:1")
        for n, pk in enumerate((recipient.pk, recipient.pk + 1000))
    ]
    with django_assert_num_queries(1):
        settlement.on_kept_statuses(StatusesKept(cloud_org, updates))
    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.SENT


def test_retry_unknown_sends_again_only_those_unknown_for_ten_minutes(api, cloud_org, graph):
    uuid = create(api, phones=numbers(3))
    run_tasks()
    old, recent, sent = Recipient.objects.order_by("id")
    Recipient.objects.filter(pk__in=[old.pk, recent.pk]).update(
        status=RecipientStatus.UNKNOWN, chat=None
    )
    Recipient.objects.filter(pk=old.pk).update(claimed_at=timezone.now() - timedelta(minutes=11))

    response = api.post(f"/api/campaigns/{uuid}/retry-unknown")
    assert response.status_code == 200
    assert response.json() == {
        "statusCode": 200,
        "id": uuid,
        "message": "Request processed successfully",
        "retried": 1,
    }
    assert api.post(f"/api/campaigns/{uuid}/retry-unknown").json()["retried"] == 0
    assert shown(api, uuid)["status"] == "running"
    run_tasks()

    assert [r.json["to"] for r in sends(graph)].count(old.phone) == 2
    assert [r.json["to"] for r in sends(graph)].count(recent.phone) == 1
    data = shown(api, uuid)
    assert (data["status"], data["sent"], data["unknown"]) == ("completed", 2, 1)
    old.refresh_from_db()
    assert old.attempts == 2
    assert sends(graph)[-1].json["biz_opaque_callback_data"] == f"campaign-recipient:{old.pk}:2"


def test_retry_unknown_is_refused_for_a_cancelled_campaign(api, cloud_org, graph):
    uuid = create(api, phones=numbers(1), scheduled_at="2099-01-01T00:00:00Z")
    api.post(f"/api/campaigns/{uuid}/cancel")
    response = api.post(f"/api/campaigns/{uuid}/retry-unknown")
    assert response.status_code == 409
    assert "cancelled" in response.json()["message"]


def test_an_api_send_names_its_chat(api, cloud_org, graph):
    response = api.post("/api/send", {"phone": "+4915123456000", "message": "Hi"}, format="json")
    assert response.status_code == 200, response.json()
    chat = Chat.objects.get()
    assert sends(graph)[0].json["biz_opaque_callback_data"] == f"chat:{chat.uuid}"
    assert Campaign.objects.count() == 0


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_status_racing_the_marking_of_its_recipient_unknown_settles_it(
    api, cloud_org, graph, monkeypatch
):
    """The webhook keeps the status and finds the recipient still `sending`; meanwhile a
    sender marks it unknown and looks for kept statuses before the webhook commits.
    Each holds the callback data before it looks, so the second to look sees both."""
    set_channel(cloud_org, app_secret=APP_SECRET)
    create(api, phones=numbers(1))
    run_tasks()
    recipient = Recipient.objects.get()
    Chat.objects.filter(pk=recipient.chat_id).delete()
    # As a worker that died after the request went out leaves its claim.
    Recipient.objects.filter(pk=recipient.pk).update(
        status=RecipientStatus.SENDING, chat=None, claimed_by="dead-worker"
    )
    looked, marked = threading.Event(), threading.Event()
    settle = settlement.settle

    def webhook_pauses_after_looking(organization, recipients):
        if threading.current_thread().name == "webhook":
            looked.set()
            marked.wait(2)  # the sender marks and looks now, unless it waits on the lock
        return settle(organization, recipients)

    monkeypatch.setattr(settlement, "settle", webhook_pauses_after_looking)
    payload = tracked_status("wamid.RACED", "delivered", callback_data(recipient), "x")
    answers = []

    def webhook():
        answers.append(deliver(cloud_org, payload).status_code)
        connection.close()

    def sender():
        looked.wait(10)
        mark_dead_claims_unknown(campaign_id=recipient.campaign_id, worker_id="alive")
        marked.set()
        connection.close()

    threads = [threading.Thread(target=webhook, name="webhook"), threading.Thread(target=sender)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert answers == [200]
    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.SENT
    assert Chat.objects.get(pk=recipient.chat_id).wam_id == "wamid.RACED"


def test_a_recipient_whose_chat_was_recorded_before_its_worker_died_follows_it(
    api, cloud_org, graph
):
    """The worker recorded the chat and died before marking the recipient sent: the
    chat's statuses, before or after the claim is marked unknown, settle the recipient."""
    set_channel(cloud_org, app_secret=APP_SECRET)
    create(api, phones=numbers(2))
    run_tasks()
    early, late = Recipient.objects.order_by("id")
    chats = {r.pk: Chat.objects.get(pk=r.chat_id) for r in (early, late)}
    Recipient.objects.filter(pk__in=[early.pk, late.pk]).update(
        status=RecipientStatus.SENDING, chat=None, claimed_by="dead-worker"
    )
    # A status for one comes while its claim is still `sending`: it moves its chat only.
    first = tracked_status(chats[early.pk].wam_id, "delivered", callback_data(early), "x")
    assert deliver(cloud_org, first).status_code == 200
    early.refresh_from_db()
    assert early.status == RecipientStatus.SENDING

    assert mark_dead_claims_unknown(campaign_id=early.campaign_id, worker_id="alive") == 2
    early.refresh_from_db()
    late.refresh_from_db()
    assert (early.status, early.chat_id) == (RecipientStatus.SENT, chats[early.pk].pk)
    assert late.status == RecipientStatus.UNKNOWN

    # The other's first status comes after: it settles it.
    second = tracked_status(chats[late.pk].wam_id, "read", callback_data(late), "x")
    assert deliver(cloud_org, second).status_code == 200
    late.refresh_from_db()
    assert (late.status, late.chat_id, late.contact_id) == (
        RecipientStatus.SENT,
        chats[late.pk].pk,
        chats[late.pk].contact_id,
    )
    assert Chat.objects.count() == 2  # no chat recorded twice
