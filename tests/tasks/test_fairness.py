"""Fair sharing between organizations (), with a real worker process
on PostgreSQL, the Cloud API stand-in and real receivers on loopback, scaled to seconds:
organization A runs 10 campaigns and has 10 endpoints that never answer; organization
B's auto-replies reach the channel within 2 s and its events its endpoint within 3 s,
and A's work is still done, nothing lost and nothing sent twice. And when A owes a
backlog of auto-replies to a slow channel, B's are claimed in the first turns
(messaging_project/worker/turns.py), not after A's whole backlog."""

import json
import math
import time
from collections import Counter

import pytest
from django.db import connection
from django_tasks_db.models import DBTaskResult

from business_numbers import services as number_services
from campaigns import services as campaign_services
from campaigns.models import Campaign, RecipientStatus
from devtools.silent_receiver import SilentReceiver
from devtools.webhook_receiver import WebhookReceiver
from events import services as event_services
from events.models import Delivery
from messaging_project.worker.models import WorkerHeartbeat
from messaging_project.worker.priorities import bulk_threads
from tests.channel import ACCESS_TOKEN, BUSINESS_ACCOUNT_ID, set_channel
from tests.inbound.conftest import APP_SECRET, answer_hours, deliver, envelope, text_message
from tests.tasks.processes import environment, start_worker, stop, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real processes against one PostgreSQL"
    ),
]
TEMPLATE = {"name": "order_update", "language": {"code": "en_US"}}
THREADS = 8
# A's load: 10 campaigns whose 20 sender tasks would hold every thread for most of 20 s,
# and 10 silent endpoints with 10 events each, 3 s per attempt: 100 attempts that would
# hold all of a worker's 32 POST slots for about 10 s.
CAMPAIGNS, RECIPIENTS, RATE = 10, 20, 10
DEAD, A_EVENTS, TIMEOUT = 10, 10, 3
# B's interactive work meanwhile: a message every 0.4 s, each owed an auto-reply
# and a `message.received` to its endpoint.
B_MESSAGES, B_EVERY = 12, 0.4


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def template_sends(graph) -> Counter:
    return Counter(
        request.json["to"]
        for request in list(graph.requests)
        if request.method == "POST" and (request.json or {}).get("type") == "template"
    )


# A phone number id is one organization's: B's number is its own.
B_PHONE_NUMBER_ID = "106540352240002"


def to_b(message: dict) -> dict:
    """A delivery of `message` to B's number."""
    delivery = envelope(message)
    delivery["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = B_PHONE_NUMBER_ID
    return delivery


def b_organization(org_b):
    number_services.configure_channel(
        organization=org_b,
        phone_number_id=B_PHONE_NUMBER_ID,
        access_token=ACCESS_TOKEN,
        business_account_id=BUSINESS_ACCOUNT_ID,
    )
    return answering_hours(org_b, "9 to 5")


def answering_hours(organization, response: str):
    """The organization's webhook signed with APP_SECRET, and "hours" answered."""
    set_channel(organization, app_secret=APP_SECRET)
    answer_hours(organization, response)
    return organization


def test_one_organizations_campaigns_and_dead_endpoints_do_not_hold_up_anothers_replies(
    cloud_org, org_b, graph, tmp_path
):
    org_a, org_b = cloud_org, b_organization(org_b)
    replied: dict[str, float] = {}  # B's sender -> when its auto-reply reached the channel

    def seen(request) -> None:
        if request.method == "POST" and (request.json or {}).get("type") == "text":
            replied.setdefault(request.json["to"], time.time())

    graph.on_request = seen
    env = environment(
        tmp_path,
        WHATSAPP_GRAPH_URL=graph.url,
        WHATSAPP_TIMEOUT="5",
        WEBHOOK_ALLOW_PRIVATE_URLS="true",
        WEBHOOK_TIMEOUT=str(TIMEOUT),
        WEBHOOK_RETRY_SCHEDULE="600",  # one attempt each within the test
        # The caps and turns alone: every event to A's silent endpoints is attempted
        # (the circuit breaker would back them off: tests/events/test_circuit_breaker.py).
        WEBHOOK_BREAKER_FAILURES="0",
        CAMPAIGN_SENDERS="2",
        CAMPAIGN_THREADS="6",
    )
    log = tmp_path / "worker.log"
    with SilentReceiver() as dead, WebhookReceiver() as live:
        for n in range(DEAD):
            event_services.create_endpoint(
                organization=org_a, url=f"{dead.url}/{n}", events=["group.created"]
            )
        event_services.create_endpoint(
            organization=org_b, url=live.url, events=["message.received"]
        )
        worker = start_worker(env, log, "--worker-id", "fair", "--threads", str(THREADS))
        try:
            wait_until(lambda: WorkerHeartbeat.objects.exists(), what="the worker")
            campaigns = [
                campaign_services.create_campaign(
                    organization=org_a,
                    name=f"c{c}",
                    template=TEMPLATE,
                    phones=[f"+4915123{c:02d}{n:04d}" for n in range(RECIPIENTS)],
                    rate=RATE,
                )
                for c in range(CAMPAIGNS)
            ]
            wait_until(
                lambda: (
                    DBTaskResult.objects.filter(
                        task_path="campaigns.tasks.send_campaign", status="RUNNING"
                    ).count()
                    >= bulk_threads(THREADS)
                ),
                what="the campaigns' senders in every thread they may have",
            )
            for n in range(A_EVENTS):
                event_services.emit_event(
                    organization_id=org_a.pk, event="group.created", data={"n": n}
                )
            wait_until(lambda: len(dead.ids()) >= DEAD, what="A's silent endpoints busy")

            asked: dict[str, float] = {}
            for n in range(B_MESSAGES):
                sender = f"1415555{n:04d}"
                response = deliver(org_b, to_b(text_message("hours?", sender=sender)))
                assert response.status_code == 200
                asked[sender] = time.time()
                time.sleep(B_EVERY)
            assert live.wait_for(B_MESSAGES, timeout=30), len(live.requests)
            wait_until(lambda: len(replied.keys() & asked.keys()) == B_MESSAGES, seconds=30)

            # A's work completes meanwhile: every recipient sent once, every event to the
            # silent endpoints attempted once (their retry is ten minutes away).
            wait_until(
                lambda: all(
                    c.status == "completed" for c in Campaign.objects.filter(organization=org_a)
                ),
                seconds=60,
                what="A's campaigns",
            )
            wait_until(lambda: len(dead.ids()) >= DEAD * A_EVENTS, seconds=60, what="A's events")
            time.sleep(1)  # anything sent twice would come now
        finally:
            assert stop(worker) == 0, log.read_text()[-3000:]

    reply_latency = [replied[sender] - at for sender, at in asked.items()]
    event_at = {}
    for request in live.requests:
        event_at.setdefault(json.loads(request.body)["data"]["contact"]["phone"], request.at)
    event_latency = [event_at[sender] - at for sender, at in asked.items()]
    assert p99(reply_latency) <= 2.0, sorted(reply_latency)
    assert p99(event_latency) <= 3.0, sorted(event_latency)
    assert len(live.requests) == B_MESSAGES  # once each

    sent = template_sends(graph)
    assert len(sent) == CAMPAIGNS * RECIPIENTS and set(sent.values()) == {1}
    for campaign in campaigns:
        statuses = Counter(campaign.recipients.values_list("status", flat=True))
        assert statuses == {RecipientStatus.SENT: RECIPIENTS}
    ids = dead.ids()
    a_deliveries = Delivery.objects.filter(organization=org_a)
    assert sorted(ids) == sorted(a_deliveries.values_list("msg_id", flat=True))
    assert set(a_deliveries.values_list("attempts", flat=True)) == {1}


# A's flood: auto-replies owed to 160 of A's customers at once, each taking 0.5 s at A's
# channel: 10 s of work for 8 threads. B's few replies must not wait behind all of it.
FLOOD, FLOOD_SECONDS, B_REPLIES = 160, 0.5, 4


def test_one_organizations_flood_of_auto_replies_delays_anothers_by_a_turn(
    cloud_org, org_b, graph, tmp_path
):
    org_a, org_b = answering_hours(cloud_org, "8 to 4"), b_organization(org_b)
    replied: dict[str, float] = {}

    def answer(request) -> None:
        if request.method == "POST" and (request.json or {}).get("type") == "text":
            if request.json["text"]["body"] == "8 to 4":  # A's channel is slow
                time.sleep(FLOOD_SECONDS)
            replied.setdefault(request.json["to"], time.time())

    graph.on_request = answer
    a_senders = [f"4915199{n:05d}" for n in range(FLOOD)]
    for first in range(0, FLOOD, 40):  # owed before the worker starts: one backlog
        batch = [text_message("hours?", sender=s) for s in a_senders[first : first + 40]]
        assert deliver(org_a, envelope(*batch)).status_code == 200
    b_senders = [f"1415666{n:04d}" for n in range(B_REPLIES)]
    for sender in b_senders:
        assert deliver(org_b, to_b(text_message("hours?", sender=sender))).status_code == 200

    env = environment(tmp_path, WHATSAPP_GRAPH_URL=graph.url, WHATSAPP_TIMEOUT="5")
    log = tmp_path / "worker.log"
    worker = start_worker(env, log, "--worker-id", "turns", "--threads", str(THREADS))
    try:
        wait_until(lambda: WorkerHeartbeat.objects.exists(), what="the worker")
        started = time.time()
        wait_until(lambda: len(replied) == FLOOD + B_REPLIES, seconds=60, what="every reply")
    finally:
        assert stop(worker) == 0, log.read_text()[-3000:]

    # B's replies were claimed in the first turns (its first before A's second...): they
    # left within about one of A's slow sends, not after A's whole backlog (10 s).
    b_latency = sorted(replied[sender] - started for sender in b_senders)
    a_done = max(replied[sender] for sender in a_senders) - started
    assert b_latency[-1] <= 2.0, b_latency
    assert a_done >= FLOOD * FLOOD_SECONDS / THREADS * 0.8, a_done
    texts = Counter(
        request.json["to"]
        for request in list(graph.requests)
        if request.method == "POST" and (request.json or {}).get("type") == "text"
    )
    assert len(texts) == FLOOD + B_REPLIES and set(texts.values()) == {1}  # once each
