"""The `statuses` scenario: WhatsApp's status webhooks, one status a delivery as WhatsApp
posts them, and what a campaign message costs with its two statuses.

- **Throughput**: outbound chats each to a contact of its own (bench/statuses_seed.py),
  an event endpoint subscribed to message.status.update on a loopback receiver that
  answers at once. Signed `delivered` webhooks (after `sent` ones to warm up) go as
  fast as 8 wrk connections take them (a closed loop, for the ceiling); then `sent` and
  later `delivered` webhooks for other chats at 1,000 a second on a fixed schedule (an
  open loop), 8 connections. Each status of the open loop must then show on its chat
  (its event stored, the chat in the highest status it got) and reach the receiver
  within 2 s: the latency of an event is its arrival at the receiver minus the moment
  the webhook stored the status (the status event's `received_at`, just before the
  commit that precedes the 200). The events' pace while the statuses came and after
  says whether the deliveries were short of CPU (the web and they share two cores).
- **An event's cost**: the CPU the service's processes spent over the open loop and
  its events' delivery, per status, less a status webhook's in the cost step (where no
  endpoint listens): what an endpoint subscribed to the statuses adds a status.
- **Cost**: a campaign through the Cloud API stand-in, then each message's `sent` and
  `delivered` posted by wrk (8 connections, one status a webhook, the campaign's
  callback data on each, as WhatsApp returns it). The CPU the service's processes
  spent over both (bench/cpu.py: this stack's web and worker processes, PostgreSQL's
  backends of its database and the cluster's background processes; not the stand-in,
  wrk or this driver), per campaign message. No endpoint listens there.
"""

import json
import time

import psycopg
import requests

from bench import cpu
from bench.campaigns import create_campaign, numbers, wait_done
from bench.load import percentile, summarize, wrk_once
from bench.payloads import ACCESS_TOKEN, signature, status_update
from bench.report import target
from bench.stack import Stack, log
from bench.statuses_seed import PHONE_BASE
from devtools.webhook_receiver import WebhookReceiver

FULL = {
    "closed_chats": 12_000,
    "closed_s": 6,
    "open_chats": 5_000,
    "rate": 1000,
    "campaign": 5_000,
    "campaign_rate": 500,
}
QUICK = {
    "closed_chats": 1_000,
    "closed_s": 2,
    "open_chats": 200,
    "rate": 200,
    "campaign": 200,
    "campaign_rate": 100,
}
CONNECTIONS = 8
# The service's processes, whose CPU the cost target counts (bench/cpu.py's kinds).
SERVICE = ("web", "worker", "postgresql", "postgresql background")
WITHIN_S = 2.0
# Statuses at these rates are queued for the workers, as docs/webhooks.md advises.
QUEUED = {"WHATSAPP_STATUSES_QUEUED": "true"}
SETTINGS = {
    **QUEUED,
    "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
    # One endpoint gets up to a thousand events a second: the default caps (4 under way
    # to an endpoint, 16 to an organization) are for tenants that share the workers. All
    # of the worker's 32 POST slots: with 16 the web took more of the two cores and the
    # events' lag grew further through the run (slowest 16.6 s against 4.9-8.5 s with 32).
    "WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT": "32",
    "WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION": "32",
}
COST_SEED = f"""
import json
from accounts.services import create_organization, issue_token
from business_numbers.services import configure_channel
from bench.payloads import APP_SECRET
org = create_organization(name="Bench campaign cost")
configure_channel(organization=org, phone_number_id="100000000000001",
                  access_token="{ACCESS_TOKEN}", app_secret=APP_SECRET)
print(json.dumps({{"uuid": str(org.uuid), "token": issue_token(organization=org).token}}))
"""
# The campaign's messages and what their statuses carry back.
SENT_MESSAGES_SQL = """
SELECT chat.wam_id, contact.phone, recipient.id, recipient.attempts
FROM campaigns_recipient recipient
JOIN sending_chat chat ON chat.id = recipient.chat_id
JOIN contacts_contact contact ON contact.id = chat.contact_id
WHERE recipient.status = 'sent' ORDER BY recipient.id
"""
# For the open loop's chats: the statuses stored, and the chats not in the highest of them.
VISIBLE_SQL = """
WITH stored AS (
    SELECT e.chat_id, e.wam_id, max(CASE e.status WHEN 'delivered' THEN 2 ELSE 1 END) AS rank,
        count(*) AS statuses
    FROM sending_chatstatusevent e
    WHERE e.wam_id = ANY(%s) GROUP BY e.chat_id, e.wam_id
)
SELECT coalesce(sum(statuses), 0)::int,
    count(*) FILTER (WHERE chat.status <> CASE rank WHEN 2 THEN 'delivered' ELSE 'sent' END)
FROM stored JOIN sending_chat chat ON chat.id = stored.chat_id
"""
STORED_AT_SQL = """
SELECT wam_id, status, extract(epoch FROM received_at) FROM sending_chatstatusevent
WHERE wam_id = ANY(%s)
"""


# What became of the deliveries that did not succeed (a miss's cause, in the results).
UNDELIVERED_SQL = """
SELECT status, attempts, left(last_error, 200), count(*) FROM events_delivery
WHERE status <> 'succeeded' GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 10
"""


def fetch(stack: Stack, statement: str, params: list | None = None) -> list[tuple]:
    with psycopg.connect(stack.url, autocommit=True) as conn:
        return conn.execute(statement, params).fetchall()


def wam_id(n: int) -> str:
    return f"wamid.statuses.{n}"


def signed_statuses(first: int, count: int, status: str) -> list[tuple[str, bytes]]:
    """`status` webhooks for the seeded chats first..first+count-1, one status each."""
    now = int(time.time())
    bodies = [
        status_update(wam_id(n), status, str(PHONE_BASE + n), timestamp=now)
        for n in range(first, first + count)
    ]
    return [(signature(body), body) for body in bodies]


def post(stack: Stack, organization: str, signed: list, seconds: float, rate: float | None):
    run = wrk_once(
        stack.base,
        method="POST",
        path=f"/webhooks/whatsapp/{organization}",
        signed=signed,
        rate=rate,
        connections=CONNECTIONS,
        duration=seconds,
        scratch=stack.scratch,
    )
    return run, summarize([run], connections=CONNECTIONS, rate=rate)


def events_received(receiver: WebhookReceiver) -> dict[tuple[str, str], list[float]]:
    """(message id, status) of each message.status.update that arrived: its arrivals."""
    found: dict[tuple[str, str], list[float]] = {}
    for request in list(receiver.requests):
        data = json.loads(request.body)["data"]
        found.setdefault((data["wam_id"], data["status"]), []).append(request.at)
    return found


def moving(rows: list[tuple]) -> list[tuple]:
    """The stored statuses (message, status, stored at) that moved their chat: all but a
    `sent` stored after its message's `delivered`, which leaves the chat delivered and
    is no event. wrk sends the list in turn and starts again at its head when the run
    outlasts it, so at the full rate a message's `sent` can come last."""
    delivered = {message: at for message, status, at in rows if status == "delivered"}
    return [
        (message, status, at)
        for message, status, at in rows
        if not (status == "sent" and message in delivered and at > delivered[message])
    ]


def open_loop(stack: Stack, organization: str, receiver: WebhookReceiver, config: dict) -> dict:
    """sent, then delivered, for the open loop's chats at `rate` a second; what showed on
    the chats and when each event arrived."""
    first, count, rate = config["closed_chats"] + 1, config["open_chats"], config["rate"]
    signed = signed_statuses(first, count, "sent") + signed_statuses(first, count, "delivered")
    receiver.requests.clear()
    before = stack.cpu_snapshot()
    started = time.time()
    _, row = post(stack, organization, signed, len(signed) / rate, rate)
    ended = time.time()
    ids = [wam_id(n) for n in range(first, first + count)]
    # Statuses queued for the workers included (their events' delay is measured below).
    stack.wait_drained("after the open loop")
    stored, not_shown = stack.sql(VISIBLE_SQL, [ids])
    rows = fetch(stack, STORED_AT_SQL, [ids])
    # Every status that moves its chat is one event.
    expected = moving(rows)
    receiver.wait_for(len(expected), timeout=60)
    stack.wait_drained("after the open loop's events")
    by_status = cpu.spent(before, stack.cpu_snapshot())
    arrivals = events_received(receiver)
    latencies, missing = [], 0
    for message, status, stored_at in expected:
        arrived = arrivals.get((message, status))
        if arrived:
            latencies.append(min(arrived) - float(stored_at))
        else:
            missing += 1
    twice = sum(len(times) - 1 for times in arrivals.values())
    # The events' pace while the statuses came and after: where the cores went.
    firsts = [min(times) for times in arrivals.values()]
    during = sum(started <= at <= ended for at in firsts)
    after = [at for at in firsts if at > ended]
    return {
        **row,
        "statuses_stored": stored,
        "sent_after_its_delivered": len(rows) - len(expected),
        "chats_not_showing_their_status": not_shown,
        "events_received": sum(len(times) for times in arrivals.values()),
        "events_missing": missing,
        "events_twice": twice,
        "undelivered": [list(kept) for kept in fetch(stack, UNDELIVERED_SQL)] if missing else [],
        "event_p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "event_p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "event_max_ms": round(max(latencies, default=0) * 1000, 1),
        "events_per_s_while_statuses_came": round(during / max(ended - started, 0.001), 1),
        "events_per_s_after": round(len(after) / max(max(after, default=ended) - ended, 0.001), 1),
        # The statuses taken and their events delivered (the receiver is the driver's).
        "cpu_ms_per_status_with_its_event": {
            kind: round(ms / max(1, stored), 2) for kind, ms in by_status.items()
        },
    }


def shown_by_the_api(stack: Stack, token: str, sample: list[str]) -> int:
    """How many of these chats GET /api/chats/{uuid} shows delivered, with both statuses."""
    shown = 0
    for (uuid_,) in fetch(stack, "SELECT uuid FROM sending_chat WHERE wam_id = ANY(%s)", [sample]):
        data = requests.get(
            f"{stack.base}/api/chats/{uuid_}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        ).json()["data"]
        statuses = [status["status"] for status in data["statuses"]]
        shown += data["status"] == "delivered" and statuses == ["sent", "delivered"]
    return shown


def throughput(template: str, config: dict) -> dict:
    with WebhookReceiver() as receiver:
        seed = ("bench.statuses_seed", str(config["closed_chats"] + config["open_chats"]))
        with Stack(
            template, seed_module=(*seed, receiver.url), stand_in=False, threads=8, **SETTINGS
        ) as stack:
            seeded = json.loads(stack.seeded)
            organization = seeded["uuid"]
            # `sent` to warm the web workers up (the first requests import and connect),
            # then `delivered` for the same chats, measured.
            post(stack, organization, signed_statuses(1, config["closed_chats"], "sent"), 2, None)
            stack.wait_drained("before the closed loop", timeout=600)
            signed = signed_statuses(1, config["closed_chats"], "delivered")
            _, closed = post(stack, organization, signed, config["closed_s"], None)
            log(f"statuses, closed loop: {json.dumps(closed)}")
            stack.wait_drained("before the open loop", timeout=600)
            opened = open_loop(stack, organization, receiver, config)
            log(f"statuses, open loop: {json.dumps(opened)}")
            first = config["closed_chats"] + 1
            sample = [wam_id(n) for n in range(first, first + 20)]
            opened["api_sample_shown"] = shown_by_the_api(stack, seeded["token"], sample)
    return {"closed_loop": closed, "open_loop": opened}


def campaign_cost(template: str, config: dict) -> dict:
    """CPU by process over a campaign and its messages' sent and delivered webhooks."""
    recipients, rate = config["campaign"], config["campaign_rate"]
    with Stack(template, seed=COST_SEED, use_redis=False, threads=8, **QUEUED) as stack:
        seeded = json.loads(stack.seeded)
        stack.wait_drained("before the campaign")
        before = stack.cpu_snapshot()
        started = time.monotonic()
        campaign = create_campaign(stack.base, seeded["token"], numbers("154", recipients), rate)
        shown = wait_done(stack.base, seeded["token"], campaign, recipients / rate * 3 + 60)
        stack.wait_drained("after the campaign")
        campaign_s = time.monotonic() - started
        after_campaign = stack.cpu_snapshot()
        sent = fetch(stack, SENT_MESSAGES_SQL)
        webhooks = []
        for status in ("sent", "delivered"):
            for message, phone, recipient, attempts in sent:
                body = status_update(
                    message,
                    status,
                    phone,
                    timestamp=int(time.time()),
                    callback_data=f"campaign-recipient:{recipient}:{attempts}",
                )
                webhooks.append((signature(body), body))
        # At the pace WhatsApp would post them (two a message), each once: a webhook
        # the machine could not take in time is left out of the figure per webhook.
        posted_started, pace = time.monotonic(), 2 * rate
        _, posted = post(stack, seeded["uuid"], webhooks, len(webhooks) / pace, pace)
        stack.wait_drained("after the status webhooks")
        statuses_s = time.monotonic() - posted_started
        after = stack.cpu_snapshot()
        stored = stack.sql("SELECT count(*) FROM sending_chatstatusevent")[0]
    messages, webhooks_answered = max(1, len(sent)), max(1, posted["requests"])
    by_campaign = cpu.spent(before, after_campaign)
    by_statuses = cpu.spent(after_campaign, after)
    # A message: its share of the campaign, and two status webhooks.
    per_message = {
        kind: round(
            by_campaign.get(kind, 0.0) / messages
            + 2 * by_statuses.get(kind, 0.0) / webhooks_answered,
            2,
        )
        for kind in SERVICE
    }
    return {
        "recipients": recipients,
        "rate": rate,
        "sent": len(sent),
        "campaign_counts": {k: shown[k] for k in ("status", "total", "sent", "failed")},
        "campaign_s": round(campaign_s, 1),
        "status_webhooks": len(webhooks),
        "status_webhooks_answered": posted["requests"],
        "status_webhooks_per_s": posted.get("sent_rps"),
        "status_webhooks_non_2xx": posted["non_2xx"],
        "statuses_stored": stored,
        "statuses_s": round(statuses_s, 1),
        "cpu_ms_per_message": per_message,
        "cpu_ms_per_message_total": round(sum(per_message.values()), 2),
        "cpu_ms_per_message_campaign": {
            kind: round(ms / messages, 2) for kind, ms in by_campaign.items()
        },
        "cpu_ms_per_status_webhook": {
            kind: round(ms / webhooks_answered, 2) for kind, ms in by_statuses.items()
        },
    }


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    rows = throughput(template, config)
    rows["cost"] = campaign_cost(template, config)
    log(f"statuses, cost: {json.dumps(rows['cost'])}")
    opened, cost = rows["open_loop"], rows["cost"]
    rate = config["rate"]
    kept = opened["sent_rps"] >= 0.98 * rate and opened["late"] <= 0.01 * opened["requests"]
    wrong = (
        opened["chats_not_showing_their_status"]
        + opened["events_missing"]
        + opened["events_twice"]
        + opened["non_2xx"]
    )
    spent = cost["cpu_ms_per_message_total"]
    # What an endpoint subscribed to the statuses adds a status: its event, fanned out
    # and delivered (the open loop's statuses with their events, less the cost step's
    # status webhooks, which no endpoint wants; both queued, at 1,000 a second).
    with_event = opened["cpu_ms_per_status_with_its_event"]
    alone = cost["cpu_ms_per_status_webhook"]
    rows["cpu_ms_per_event_delivered"] = {
        kind: round(with_event.get(kind, 0.0) - alone.get(kind, 0.0), 2) for kind in SERVICE
    }
    log(f"statuses, an event's delivery: {json.dumps(rows['cpu_ms_per_event_delivered'])}")
    return {
        "targets": {
            f"status webhooks at {rate}/s, 8 connections: sent per second, none late": target(
                opened["sent_rps"], kept, goal=f">= {0.98 * rate:g}"
            ),
            f"status webhooks at {rate}/s: p99 ms": target(
                opened["p99_ms"], opened["p99_ms"] < 200, goal="< 200"
            ),
            "status webhooks: statuses not on their chat, events missing or twice": target(
                wrong, wrong == 0, goal="0"
            ),
            "status webhooks: slowest event ms after its status was stored": target(
                opened["event_max_ms"], opened["event_max_ms"] <= WITHIN_S * 1000, goal="<= 2,000"
            ),
            "CPU ms per campaign message": target(spent, spent <= 2.0, goal="<= 2.0"),
        },
        "config": config,
        **rows,
    }
