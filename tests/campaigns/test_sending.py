"""Sending a campaign in this process: outcomes per recipient, opt-out, throttling,
cancel, and claims left by a worker that died."""

import logging
import time
from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from business_numbers.models import Number
from campaigns import services
from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus, SendPace
from campaigns.pacing import LEAD, LEEWAY, ensure_pace, on_time, take_turns
from campaigns.recipients import complete_if_done, mark_dead_claims_unknown
from campaigns.tasks import resume_stalled_campaigns
from contacts.models import Contact, OptOutWords
from devtools.cloud_api_server import graph_error
from inbound.services.webhook import process_webhook
from messaging_project.worker.models import WorkerHeartbeat
from sending.models import Chat
from tests.background import run_tasks
from tests.campaigns.conftest import TEMPLATE, body, sends
from tests.factories import ContactFactory, create_campaign_record
from tests.inbound.conftest import envelope, status, statuses, text_message

pytestmark = pytest.mark.django_db

PHONES = ["+4915123456000", "+4915123456001", "+4915123456002"]


def create(api, **values):
    response = api.post("/api/campaigns", body(**values), format="json")
    assert response.status_code == 200, response.json()
    return response.json()["id"]


def shown(api, uuid):
    return api.get(f"/api/campaigns/{uuid}").json()["data"]


def test_a_refusal_fails_that_recipient_and_the_rest_go_on(api, cloud_org, graph):
    graph.reply(400, graph_error(131026, "Message undeliverable"))
    uuid = create(api, phones=PHONES)
    run_tasks()

    assert len(sends(graph)) == 3
    data = shown(api, uuid)
    assert (data["status"], data["sent"], data["failed"]) == ("completed", 2, 1)
    failed = Recipient.objects.get(status=RecipientStatus.FAILED)
    assert "131026" in failed.error
    assert failed.contact_id is not None
    assert Chat.objects.get(pk=failed.chat_id).status == "failed"


def test_no_answer_is_unknown_and_not_sent_again(api, cloud_org, graph, settings):
    settings.WHATSAPP_TIMEOUT = 0.3
    graph.fault(delay=1.0)
    uuid = create(api, phones=PHONES)
    run_tasks()
    run_tasks()

    assert len(sends(graph)) == 3
    data = shown(api, uuid)
    assert (data["sent"], data["unknown"], data["pending"]) == (2, 1, 0)


def test_throttling_slows_down_and_sends_again(api, cloud_org, graph, monkeypatch):
    monkeypatch.setattr("campaigns.pacing.THROTTLE_PAUSE", timedelta(seconds=0.5))
    graph.reply(400, graph_error(130429, "Rate limit hit"))
    started = time.monotonic()
    uuid = create(api, phones=PHONES[:2])
    run_tasks()

    assert time.monotonic() - started >= 0.5
    assert len(sends(graph)) == 3  # the throttled one went again
    data = shown(api, uuid)
    assert (data["sent"], data["failed"], data["status"]) == (2, 0, "completed")


def test_the_statuses_of_the_chats_move_the_counts(api, cloud_org, graph):
    uuid = create(api, phones=PHONES)
    run_tasks()
    chats = list(Chat.objects.order_by("id"))
    process_webhook(
        organization=cloud_org,
        payload=envelope(
            statuses(
                status(chats[0].wam_id, "delivered", 1700000001),
                status(chats[1].wam_id, "read", 1700000002),
                status(chats[2].wam_id, "failed", 1700000003, errors=[{"code": 131026}]),
            )
        ),
    )

    data = shown(api, uuid)
    assert (data["sent"], data["delivered"], data["read"], data["failed"]) == (2, 2, 1, 1)
    statuses_shown = [
        r["status"] for r in api.get(f"/api/campaigns/{uuid}/recipients").json()["data"]
    ]
    assert statuses_shown == ["delivered", "read", "failed"]


def test_an_opted_out_contact_is_skipped(api, cloud_org, graph):
    ContactFactory(organization=cloud_org, phone="4915123456001", opted_out=True)
    uuid = create(api, phones=PHONES)
    run_tasks()

    assert sorted(r.json["to"] for r in sends(graph)) == ["4915123456000", "4915123456002"]
    data = shown(api, uuid)
    assert (data["sent"], data["skipped"]) == (2, 1)


def test_a_contact_that_opts_out_after_the_start_is_skipped(api, cloud_org, graph):
    contact = ContactFactory(organization=cloud_org, phone="4915123456001")
    uuid = create(api, phones=PHONES)
    Contact.objects.filter(pk=contact.pk).update(opted_out=True)
    run_tasks()

    assert len(sends(graph)) == 2
    assert shown(api, uuid)["skipped"] == 1


def test_stop_opts_out_start_opts_back_in_and_the_contact_shows_it(api, org_a):
    contact = ContactFactory(organization=org_a, phone="14155552671")

    process_webhook(organization=org_a, payload=envelope(text_message("  Stop ")))
    assert api.get(f"/api/contacts/{contact.uuid}").json()["data"]["opted_out"] == 1
    process_webhook(organization=org_a, payload=envelope(text_message("START")))
    assert api.get(f"/api/contacts/{contact.uuid}").json()["data"]["opted_out"] == 0
    process_webhook(organization=org_a, payload=envelope(text_message("stop please")))
    assert api.get(f"/api/contacts/{contact.uuid}").json()["data"]["opted_out"] == 0


def test_the_organizations_own_words_opt_out(org_a, org_b):
    OptOutWords.objects.create(organization=org_a, stop_words="Abmelden\nno more")
    ours = ContactFactory(organization=org_a, phone="14155552671")
    theirs = ContactFactory(organization=org_b, phone="14155552671")

    process_webhook(organization=org_a, payload=envelope(text_message("NO  more")))
    process_webhook(organization=org_b, payload=envelope(text_message("abmelden")))

    ours.refresh_from_db()
    theirs.refresh_from_db()
    assert (ours.opted_out, theirs.opted_out) == (True, False)


def test_error_131050_opts_the_contact_out(api, cloud_org, graph):
    graph.reply(400, graph_error(131050, "User stopped marketing messages"))
    create(api, phones=PHONES[:1])
    run_tasks()

    assert Contact.objects.get(phone="4915123456000").opted_out
    second = create(api, phones=PHONES[:1])
    run_tasks()
    assert len(sends(graph)) == 1
    assert shown(api, second)["skipped"] == 1


def test_cancel_skips_the_rest_and_nothing_is_sent_after_it(api, cloud_org, graph):
    uuid = create(api, phones=PHONES)

    response = api.post(f"/api/campaigns/{uuid}/cancel")
    assert response.status_code == 200
    assert response.json()["id"] == uuid
    run_tasks()

    assert sends(graph) == []
    data = shown(api, uuid)
    assert (data["status"], data["skipped"], data["pending"]) == ("cancelled", 3, 0)
    assert data["finished_at"]
    # Cancelling again changes nothing.
    assert api.post(f"/api/campaigns/{uuid}/cancel").status_code == 200
    assert shown(api, uuid)["status"] == "cancelled"


def test_a_cancelled_scheduled_campaign_never_starts(api, cloud_org, graph, group):
    later = (timezone.now() + timedelta(hours=1)).isoformat()
    uuid = create(api, contact_group=str(group.uuid), scheduled_at=later)
    api.post(f"/api/campaigns/{uuid}/cancel")
    from tests.background import make_due

    make_due()
    run_tasks()

    assert sends(graph) == []
    assert (shown(api, uuid)["status"], shown(api, uuid)["total"]) == ("cancelled", 0)


def test_a_dead_workers_claims_become_unknown_and_are_not_sent(api, cloud_org, graph, settings):
    campaign = Campaign.objects.get(uuid=create(api, phones=PHONES, rate=1000))
    # A worker claimed the first recipient and died (its heartbeat stopped long ago).
    WorkerHeartbeat.objects.create(
        worker_id="dead", host="h", pid=1, threads=1, last_seen=timezone.now() - timedelta(hours=1)
    )
    first = Recipient.objects.order_by("id").first()
    Recipient.objects.filter(pk=first.pk).update(
        status=RecipientStatus.SENDING, claimed_by="dead", claimed_at=timezone.now()
    )
    run_tasks()

    assert sorted(r.json["to"] for r in sends(graph)) == ["4915123456001", "4915123456002"]
    first.refresh_from_db()
    assert first.status == RecipientStatus.UNKNOWN
    data = shown(api, campaign.uuid)
    assert (data["status"], data["unknown"], data["sent"]) == ("completed", 1, 2)


def test_a_live_workers_claim_is_left_alone(org_a):
    campaign = create_campaign_record(
        organization=org_a, name="x", template=TEMPLATE, rate=1, status=CampaignStatus.RUNNING
    )
    WorkerHeartbeat.objects.create(
        worker_id="alive", host="h", pid=1, threads=1, last_seen=timezone.now()
    )
    Recipient.objects.create(
        campaign=campaign,
        phone="4915123456000",
        status=RecipientStatus.SENDING,
        claimed_by="alive",
        claimed_at=timezone.now(),
    )

    assert mark_dead_claims_unknown(campaign_id=campaign.pk, worker_id="me") == 0
    assert not complete_if_done(campaign_id=campaign.pk)


def test_turns_are_one_interval_apart_and_never_in_the_past(org_a):
    # At 5 a second the first three turns reach 0.6 s ahead, so the second call starts
    # from the first's last turn, not from the clock.
    number_id = Number.objects.default_for(org_a).pk
    before = timezone.now()
    turns = take_turns(number_id=number_id, rate=5, count=3)
    turns += take_turns(number_id=number_id, rate=5, count=2)

    gaps = [(b - a).total_seconds() for a, b in zip(turns, turns[1:], strict=False)]
    assert all(abs(gap - 1.02 / 5) < 1e-6 for gap in gaps)
    assert before + LEAD <= turns[0] <= timezone.now() + LEAD


def test_a_turn_asked_for_late_starts_from_now_not_in_the_past(org_a):
    number_id = Number.objects.default_for(org_a).pk
    ensure_pace(number_id=number_id)
    SendPace.objects.filter(pk=number_id).update(next_at=timezone.now() - timedelta(seconds=5))
    before = timezone.now()

    [turn] = take_turns(number_id=number_id, rate=50, count=1)

    assert before + LEAD <= turn <= timezone.now() + LEAD
    assert SendPace.objects.get(pk=number_id).next_at == turn + timedelta(seconds=1.02 / 50)


def test_a_turn_holds_for_its_leeway_only():
    turn = timezone.now()

    assert on_time(turn)()
    assert not on_time(turn - LEEWAY - timedelta(milliseconds=1))()


def test_a_send_that_missed_its_turn_is_not_written_and_goes_at_a_fresh_turn(
    cloud_org, graph, monkeypatch, caplog
):
    """A thread that wakes too late for its turn (its process stalled) does not send on
    it: written then, it could share a second with the turns taken after it, by any
    worker. It takes a fresh turn, keeps its claim, and goes once."""
    from campaigns import sender

    on_turn = sender.wait_for
    stalled: list = []

    def wake_late(turn):
        if stalled:
            return on_turn(turn)
        stalled.append(turn)  # the first message's thread wakes 50 ms after its turn
        return on_turn(turn + timedelta(milliseconds=50))

    monkeypatch.setattr(sender, "wait_for", wake_late)
    phones = [f"4915123{n:06d}" for n in range(3)]
    campaign = services.create_campaign(
        organization=cloud_org, name="c", template=TEMPLATE, phones=phones, rate=5
    )
    with caplog.at_level(logging.INFO, logger="campaigns.sender"):
        run_tasks()

    # The late one not written on its turn, and sent once all the same.
    assert sorted(r.json["to"] for r in sends(graph)) == phones
    assert set(campaign.recipients.values_list("status", "attempts")) == {(RecipientStatus.SENT, 1)}
    assert "sends missed their turns and took later ones" in caplog.text


def test_a_campaign_is_paced_at_its_rate(api, cloud_org, graph):
    times = []
    graph.on_request = lambda request: times.append(time.monotonic())
    create(api, phones=[f"+49151234560{n:02d}" for n in range(11)], rate=20)
    run_tasks()

    assert len(times) == 11
    # 10 intervals of 1.02 / 20 s; unpaced they would take a few milliseconds. The fake's
    # clock runs in this process's threads, so a first request read late (its new
    # connection's thread starting) can shorten the span by tens of milliseconds.
    assert times[-1] - times[0] >= 10 / 20 * 0.8


def test_a_sender_hands_over_to_a_new_task_after_its_slice(api, cloud_org, graph, monkeypatch):
    monkeypatch.setattr("campaigns.sender.SLICE_SECONDS", 0.0)  # one batch per slice
    monkeypatch.setattr("campaigns.sender.TICK", 0.001)  # of one recipient at rate 1000
    uuid = create(api, phones=PHONES)

    from tests.background import tasks

    run_tasks()

    assert len(sends(graph)) == 3
    assert shown(api, uuid)["status"] == "completed"
    assert tasks("campaigns.tasks.send_campaign").count() >= 3  # handed over


def test_a_sender_that_handed_over_gives_back_a_send_that_missed_its_turn(
    api, cloud_org, graph, monkeypatch, caplog
):
    """Rather than take a fresh turn itself: an overloaded worker's slices would never
    end, each keeping its threads, while a new one starts every slice."""
    from campaigns import sender

    monkeypatch.setattr("campaigns.sender.SLICE_SECONDS", 0.0)  # one batch per slice
    monkeypatch.setattr("campaigns.sender.TICK", 0.001)  # of one recipient at rate 1000
    missed: list = []

    def first_one_missed(turn) -> bool:
        if not missed:
            missed.append(turn)
            return True
        return real(turn)

    real = sender.too_late
    monkeypatch.setattr(sender, "too_late", first_one_missed)
    uuid = create(api, phones=PHONES)
    with caplog.at_level(logging.INFO, logger="campaigns.sender"):
        run_tasks()

    assert missed and len(sends(graph)) == 3
    assert shown(api, uuid)["status"] == "completed"
    assert "took later ones" not in caplog.text


def test_a_sender_tells_its_ceiling_of_the_sends_that_missed_their_turns(
    api, cloud_org, graph, monkeypatch
):
    from campaigns import sender

    missed: list = []

    def first_two_missed(turn) -> bool:
        if len(missed) < 2:
            missed.append(turn)
            return True
        return real(turn)

    real = sender.too_late
    monkeypatch.setattr(sender, "too_late", first_two_missed)
    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(
        sender.Ceiling,
        "follow",
        lambda self, now, answered, missed: seen.append((answered, missed)),
    )
    uuid = create(api, phones=PHONES)
    campaign = Campaign.objects.select_related("organization").get(uuid=uuid)
    sender.send_until_done(campaign=campaign, worker_id="w")

    assert len(sends(graph)) == 3
    # Each send once, and each that missed its turn once more at its fresh one.
    assert seen[-1] == (5, 2)


@pytest.mark.parametrize("senders, seen", [(1, [False]), (2, [True, False])])
def test_a_sender_task_counts_the_campaigns_other_senders_not_itself(
    api, cloud_org, graph, monkeypatch, settings, senders, seen
):
    """What decides whether recipients still pending at a sender's end get a new sender."""
    settings.CAMPAIGN_SENDERS = senders
    answers: list[bool] = []

    def run_campaign(*, campaign_id, worker_id, next_sender, others_claiming):
        answers.append(others_claiming())
        return "running"

    monkeypatch.setattr("campaigns.tasks.run_campaign", run_campaign)
    create(api, phones=PHONES)
    run_tasks()
    # The first of two sees the second waiting; the last sees none but itself.
    assert answers == seen


def test_a_sender_takes_turns_only_for_room_the_process_has_left(api, cloud_org, graph):
    """Another sender's sends fill the process (an overloaded worker's earlier slice
    still draining): this one claims nothing until they are recorded, and then sends
    every recipient, giving all its room back."""
    import threading

    from campaigns.sender import send_until_done, sends_under_way

    uuid = create(api, phones=PHONES)
    arrivals: list[float] = []
    answer = graph.default_reply

    def stamped(request):
        arrivals.append(time.time())
        return answer(request)

    graph.default_reply = stamped
    most = sends_under_way.most()
    assert sends_under_way.reserve(most)
    released: list[float] = []

    def others_recorded() -> None:
        time.sleep(0.5)
        released.append(time.time())
        sends_under_way.release(most)

    others = threading.Thread(target=others_recorded)
    others.start()
    campaign = Campaign.objects.select_related("organization").get(uuid=uuid)
    send_until_done(campaign=campaign, worker_id="w")
    others.join()

    assert len(arrivals) == 3 and min(arrivals) >= released[0]
    assert set(campaign.recipients.values_list("status", flat=True)) == {RecipientStatus.SENT}
    assert sends_under_way.count == 0


def test_a_campaign_whose_senders_all_failed_is_resumed(api, cloud_org, graph):
    uuid = create(api, phones=PHONES)
    other = create(api, phones=PHONES[:1])
    DBTaskResult.objects.filter(args_kwargs__args__0=Campaign.objects.get(uuid=uuid).pk).update(
        status="FAILED"
    )

    assert resume_stalled_campaigns() == 1  # the other still has its sender waiting
    assert resume_stalled_campaigns() == 0
    run_tasks()
    assert shown(api, uuid)["status"] == shown(api, other)["status"] == "completed"
    assert len(sends(graph)) == 4


def test_a_batch_costs_the_same_statements_whatever_its_size(
    cloud_org, graph, django_assert_num_queries, monkeypatch, settings
):
    settings.CAMPAIGN_THREADS = 20  # a thread for each message
    from concurrent.futures import ThreadPoolExecutor, wait

    from campaigns import pacing

    # No turn missed on a busy machine: one would be taken again, in statements of its own.
    monkeypatch.setattr(pacing, "LEEWAY", timedelta(minutes=1))

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from campaigns.sender import Sender, claim_batch, dispatch, record_answered, sends_under_way
    from contacts.models import ContactBlock

    def one_batch(phones, size):
        campaign = services.create_campaign(
            organization=cloud_org, name="c", template=TEMPLATE, phones=phones
        )
        sender = Sender(
            campaign=Campaign.objects.select_related("organization").get(pk=campaign.pk),
            worker_id="w",
        )
        sender.prepare()  # the channel and the template, once per sender
        with ThreadPoolExecutor(20) as pool:  # a thread for each message, as a sender has
            # The claim; the contacts looked up, then (BEGIN, inserted, the live count of
            # their block, endpoints for contact.created, COMMIT); the new conversations
            # (BEGIN, the pace row locked, the recipients messaged today, those started
            # today, the new ones inserted, COMMIT: written with no limit known too, so
            # that they count when one comes); the turns (PostgreSQL: one UPDATE ...
            # RETURNING; SQLite: BEGIN, the pace row read, moved, COMMIT). New ids that
            # run into the next block of 1,000 count there too: one statement more (ids
            # go on across tests).
            assert sends_under_way.reserve(size)  # the room, as send_until_done reserves it
            sender.held = size
            with CaptureQueriesContext(connection) as dispatched:
                sends, _ = dispatch(sender, claim_batch(sender, size), pool)
            blocks = {send.contact.pk // ContactBlock.SIZE for send in sends}
            turns = 1 if connection.vendor == "postgresql" else 4
            assert len(dispatched) == 12 + turns + len(blocks)
            wait([send.future for send in sends])
            # BEGIN, the message ids held (PostgreSQL), the conversations of the number
            # with the contacts (looked for, the missing made), the chats, endpoints for
            # message.sent, statuses kept for them, at the batch's end the organization's
            # count of conversations (inbox/queries.py: one statement for the batch's new
            # ones) and the day's figures (analytics: one upsert for the batch) [one round
            # trip on PostgreSQL], COMMIT; the recipients sent.
            with django_assert_num_queries(10):
                assert record_answered(sender, sends, pool) == []

    one_batch(PHONES[:1], 1)
    one_batch([f"+49151234561{n:02d}" for n in range(20)], 20)
    assert len(sends(graph)) == 21
    assert set(Recipient.objects.values_list("status", flat=True)) == {RecipientStatus.SENT}


def test_a_claim_takes_at_most_its_batch_in_order(cloud_org):
    from campaigns.sender import Sender, claim_batch

    campaign = services.create_campaign(
        organization=cloud_org, name="c", template=TEMPLATE, phones=PHONES
    )
    sender = Sender(campaign=campaign, worker_id="w")

    first = claim_batch(sender, 2)
    assert [r.phone for r in first] == ["4915123456000", "4915123456001"]
    assert {r.status for r in first} == {RecipientStatus.SENDING}
    assert [r.phone for r in claim_batch(sender, 2)] == ["4915123456002"]
    assert claim_batch(sender, 2) == []


def test_a_message_id_given_twice_fails_that_recipient_and_the_batch_is_still_recorded(
    api, cloud_org, graph
):
    answer = {
        "messaging_product": "whatsapp",
        "contacts": [{"input": "x", "wa_id": "x"}],
        "messages": [{"id": "wamid.SAME", "message_status": "accepted"}],
    }
    graph.reply(200, answer)
    graph.reply(200, answer)
    uuid = create(api, phones=PHONES)  # one batch: the three are recorded together
    run_tasks()

    assert len(sends(graph)) == 3
    data = shown(api, uuid)
    assert (data["status"], data["sent"], data["failed"]) == ("completed", 2, 1)
    failed = Recipient.objects.get(status=RecipientStatus.FAILED)
    assert "earlier message" in failed.error
    assert Chat.objects.filter(wam_id="wamid.SAME").count() == 1
