"""The `fairness` scenario: one organization's backlog against another's interactive work
(docs/operations.md).

Organization A starts 10 campaigns of 2,000 recipients at rate 5 (sender tasks that
would hold every task thread), has 10 event endpoints on a loopback receiver that reads
each request and never answers (devtools/silent_receiver.py), and creates 30 contacts
through the API: 300 deliveries, each holding a POST slot for WEBHOOK_TIMEOUT (10 s).
Meanwhile organization B gets an inbound text every half second for 30 s, each owed an
auto-reply and a `message.received` to B's endpoint (a receiver that answers at once).
B's latencies are from the moment each webhook was sent: to its reply's arrival at the
stand-in, and to its event's arrival at the receiver. The worker runs as `make run` runs
it (16 task threads). A's campaigns are cancelled at the end, and no number of theirs
may have reached the stand-in twice, nor any of B's events its receiver twice. A's
deliveries and the requests its silent receiver got are reported beside them.
"""

import json
import time
from collections import Counter

import requests

from bench.campaigns import TEMPLATE, numbers, read_arrivals
from bench.load import drive, percentile
from bench.payloads import ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID, TRIGGER
from bench.report import target
from bench.stack import Stack, log
from devtools.silent_receiver import SilentReceiver
from devtools.webhook_receiver import WebhookReceiver

FULL = {"campaigns": 10, "recipients": 2000, "rate": 5, "contacts": 30, "b_s": 30}
QUICK = {"campaigns": 10, "recipients": 200, "rate": 5, "contacts": 10, "b_s": 8}
B_RATE = 2  # B's inbound messages a second
SEED = f"""
import json
from accounts.services import create_organization, issue_token
from canned_replies.services import create_canned_reply
from events.services import create_endpoint
from business_numbers.services import configure_channel
a = create_organization(name="Bench fairness A")
b = create_organization(name="Bench fairness B")
configure_channel(organization=a, phone_number_id="100000000000009",
                  access_token="{ACCESS_TOKEN}")
configure_channel(organization=b, phone_number_id="{PHONE_NUMBER_ID}",
                  access_token="{ACCESS_TOKEN}", app_secret="{APP_SECRET}")
create_canned_reply(organization=b, name="greeting", trigger="{TRIGGER}",
                    match_criteria="contains", response="Hello")
for n in range(10):
    create_endpoint(organization=a, url="{{dead}}/" + str(n))
create_endpoint(organization=b, url="{{live}}", events=["message.received"])
print(json.dumps(dict(a=issue_token(organization=a, name="bench").token, b=str(b.uuid))))
"""


def api(stack: Stack, token: str, method: str, path: str, body: dict | None = None) -> dict:
    response = requests.request(
        method,
        f"{stack.base}/api/{path}",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    response.raise_for_status()
    return response.json()


def arrivals(stack: Stack) -> dict[str, float]:
    first: dict[str, float] = {}
    for to, at in read_arrivals(stack.arrivals):
        first.setdefault(to, at)
    return first


def load_of_a(stack: Stack, token: str, config: dict) -> tuple[list[str], list[str]]:
    """A's campaigns started and its contacts created: the campaigns and their numbers."""
    campaigns, phones = [], []
    for c in range(config["campaigns"]):
        mine = numbers(f"17{c}", config["recipients"])
        body = {"name": f"A{c}", "template": TEMPLATE, "phones": mine, "rate": config["rate"]}
        campaigns.append(api(stack, token, "POST", "campaigns", body)["id"])
        phones += mine
    for n in range(config["contacts"]):
        api(stack, token, "POST", "contacts", {"first_name": "A", "phone": f"+4916{n:09d}"})
    return campaigns, phones


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    settings = {"WEBHOOK_ALLOW_PRIVATE_URLS": "true", "TASK_WORKER_THREADS": "16"}
    if quick:
        settings["WEBHOOK_TIMEOUT"] = "3"
    dead, live = SilentReceiver().start(), WebhookReceiver().start()
    try:
        seed = SEED.format(dead=dead.url, live=live.url)
        with Stack(template, seed=seed, **settings) as stack:
            seeded = json.loads(stack.seeded)
            token, b_org = seeded["a"], seeded["b"]
            began = time.monotonic()
            campaigns, a_phones = load_of_a(stack, token, config)
            log(f"fairness: A's load started in {time.monotonic() - began:.1f} s")
            time.sleep(2)  # A's senders in their threads, its deliveries in their slots
            sent = drive(
                f"{stack.base}/webhooks/whatsapp/{b_org}",
                B_RATE,
                config["b_s"],
                447_600_000_000 + int(time.time()) % 100_000 * 1000,
            )
            asked = {phone: at for phone, at, status, _ in sent if 200 <= status < 300}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (
                asked.keys() <= arrivals(stack).keys() and len(live.requests) >= len(asked)
            ):
                time.sleep(0.2)
            replied = arrivals(stack)
            events = {}
            for request in list(live.requests):
                phone = json.loads(request.body)["data"]["contact"]["phone"]
                events.setdefault(phone, request.at)
            reply_latency = [replied[p] - at for p, at in asked.items() if p in replied]
            event_latency = [events[p] - at for p, at in asked.items() if p in events]
            for uuid_ in campaigns:
                api(stack, token, "POST", f"campaigns/{uuid_}/cancel")
            time.sleep(3)  # sends under way land
            wanted = {p.lstrip("+") for p in a_phones}
            a_sent = Counter(to for to, _ in read_arrivals(stack.arrivals) if to in wanted)
            attempts = stack.sql(
                "SELECT count(*), coalesce(sum(attempts), 0) FROM events_delivery d "
                "JOIN accounts_organization o ON o.id = d.organization_id "
                "WHERE o.name = 'Bench fairness A'"
            )
            dead.released.set()  # the worker's POSTs to them end, so it stops in time
    finally:
        dead.stop()
        live.stop()
    row = {
        "config": {**config, "b_rate": B_RATE, "webhook_timeout_s": 3 if quick else 10},
        "b_messages": len(sent),
        "b_webhook_non_2xx": len(sent) - len(asked),
        "b_replies": len(reply_latency),
        "b_events": len(event_latency),
        "b_reply_p50_ms": round(percentile(reply_latency, 50) * 1000, 1),
        "b_reply_p99_ms": round(percentile(reply_latency, 99) * 1000, 1),
        "b_event_p50_ms": round(percentile(event_latency, 50) * 1000, 1),
        "b_event_p99_ms": round(percentile(event_latency, 99) * 1000, 1),
        "a_campaign_sends": sum(a_sent.values()),
        "a_numbers_sent_twice": sum(count - 1 for count in a_sent.values()),
        "a_deliveries": attempts[0],
        "a_attempts_recorded": int(attempts[1]),
        "a_requests_at_silent_receiver": len(dead.ids()),
    }
    log(f"fairness: {json.dumps(row)}")
    lost = len(sent) - min(len(reply_latency), len(event_latency))
    twice = row["a_numbers_sent_twice"] + max(0, len(live.requests) - len(asked))
    return {
        "targets": {
            "fairness: B's auto-reply p99 ms under A's load, none lost": target(
                row["b_reply_p99_ms"],
                row["b_reply_p99_ms"] <= 2000 and lost == 0,
                goal="<= 2,000",
            ),
            "fairness: B's event p99 ms under A's load": target(
                row["b_event_p99_ms"], row["b_event_p99_ms"] <= 3000, goal="<= 3,000"
            ),
            "fairness: sent twice (A's numbers, B's events)": target(twice, twice == 0, goal="0"),
        },
        **row,
    }
