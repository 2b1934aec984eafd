"""The `backlog` scenario: 500,000 deliveries pending for another organization's dead
endpoints (docs/events.md, "Claim" and "An endpoint that keeps failing").

Organization A has 10 endpoints on a loopback receiver that reads each request and
never answers (devtools/silent_receiver.py); its backlog is written straight into the
database (`INSERT ... SELECT generate_series`): a third never attempted, a third
waiting for a retry an hour away, a third whose retry is due. With the worker stopped,
the claim a worker makes (`events.delivery.claim(32)`, rolled back each time, so every
one finds the same rows) is timed beside 1,000 such deliveries, then beside 500,000.
Then the worker runs, and organization B gets an inbound text every half second, each
owed a `message.received` to B's endpoint (a receiver that answers at once): its p99
from the webhook's sending to the event's arrival, beside the whole backlog. The quick
run writes 20,000 and gives B 8 s.
"""

import json
import time

from bench.load import drive, percentile
from bench.payloads import ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID
from bench.report import target
from bench.stack import PYTHON, Stack, log, stopped
from devtools.silent_receiver import SilentReceiver
from devtools.webhook_receiver import WebhookReceiver

FULL = {"small": 1_000, "large": 500_000, "claims": 40, "b_s": 30}
QUICK = {"small": 1_000, "large": 20_000, "claims": 10, "b_s": 8}
B_RATE = 2  # B's inbound messages a second
SEED = f"""
import json
from accounts.services import create_organization
from events.services import create_endpoint
from business_numbers.services import configure_channel
a = create_organization(name="Bench backlog A")
b = create_organization(name="Bench backlog B")
configure_channel(organization=b, phone_number_id="{PHONE_NUMBER_ID}",
                  access_token="{ACCESS_TOKEN}", app_secret="{APP_SECRET}")
dead = [create_endpoint(organization=a, url="{{dead}}/" + str(n)).pk for n in range(10)]
create_endpoint(organization=b, url="{{live}}", events=["message.received"])
print(json.dumps(dict(a=a.pk, dead=dead, b=str(b.uuid))))
"""
BACKLOG_SQL = """
INSERT INTO events_delivery (organization_id, endpoint_id, msg_id, event, body, status,
    attempts, next_attempt_at, last_error, created_at, updated_at)
SELECT %s::bigint, (%s::bigint[])[1 + n %% 10], 'msg_backlog_' || n, 'contact.created',
    '{"type":"contact.created","timestamp":"2025-06-02T16:37:25.387969Z","data":{}}',
    'pending', CASE WHEN n %% 3 = 0 THEN 0 ELSE 1 END,
    CASE n %% 3 WHEN 0 THEN NULL WHEN 1 THEN now() + interval '1 hour'
        ELSE now() - interval '1 second' END,
    '', now(), now()
FROM generate_series(%s::bigint, %s::bigint) AS n
RETURNING 1
"""
# Run by `manage.py shell` in the stack's environment: the median claim, in ms.
TIME_CLAIMS = """
import time
from django.db import transaction
from events.delivery import claim
took = []
for _ in range({claims}):
    with transaction.atomic():
        started = time.perf_counter()
        claimed = claim(32)
        took.append(time.perf_counter() - started)
        transaction.set_rollback(True)
print(round(sorted(took)[len(took) // 2] * 1000, 2), len(claimed))
"""


def add_backlog(stack: Stack, organization: int, endpoints: list[int], first: int, last: int):
    stack.sql(BACKLOG_SQL, [organization, endpoints, first, last])
    stack.vacuum()  # as autovacuum would, in time: statistics and the visibility map


def claim_ms(stack: Stack, claims: int) -> tuple[float, int]:
    """The median of `claims` claims and how many deliveries the last one took."""
    median, taken = stack.run(
        [PYTHON, "manage.py", "shell", "-c", TIME_CLAIMS.format(claims=claims)]
    ).split()
    return float(median), int(taken)


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    settings = {"WEBHOOK_ALLOW_PRIVATE_URLS": "true"}
    if quick:
        settings["WEBHOOK_TIMEOUT"] = "3"
    dead, live = SilentReceiver().start(), WebhookReceiver().start()
    try:
        seed = SEED.format(dead=dead.url, live=live.url)
        with Stack(template, seed=seed, **settings) as stack:
            seeded = json.loads(stack.seeded)
            a_org, endpoints, b_org = seeded["a"], seeded["dead"], seeded["b"]
            with stopped(stack.worker_pids(), stack.url):
                add_backlog(stack, a_org, endpoints, 1, config["small"])
                small_ms, small_taken = claim_ms(stack, config["claims"])
                began = time.monotonic()
                add_backlog(stack, a_org, endpoints, config["small"] + 1, config["large"])
                log(f"backlog: {config['large']:,} written in {time.monotonic() - began:.0f} s")
                large_ms, large_taken = claim_ms(stack, config["claims"])
            log(f"backlog: claim {small_ms} ms at {config['small']:,}, {large_ms} ms at "
                f"{config['large']:,}")  # fmt: skip
            sent = drive(
                f"{stack.base}/webhooks/whatsapp/{b_org}",
                B_RATE,
                config["b_s"],
                447_600_000_000 + int(time.time()) % 100_000 * 1000,
            )
            asked = {phone: at for phone, at, status, _ in sent if 200 <= status < 300}
            live.wait_for(len(asked), timeout=60)
            events: dict[str, float] = {}
            for request in list(live.requests):
                phone = json.loads(request.body)["data"]["contact"]["phone"]
                events.setdefault(phone, request.at)
            latency = [events[p] - at for p, at in asked.items() if p in events]
            a_state = stack.sql(
                "SELECT count(*) FILTER (WHERE open_until IS NOT NULL), "
                "coalesce(sum(failures_in_a_row), 0) FROM events_endpoint "
                "WHERE organization_id = %s",
                [a_org],
            )
            dead.released.set()  # the worker's POSTs to them end, so it stops in time
    finally:
        dead.stop()
        live.stop()
    ratio = round(large_ms / max(small_ms, 0.01), 2)
    row = {
        "config": {**config, "b_rate": B_RATE, "webhook_timeout_s": 3 if quick else 10},
        "claim_ms_small": small_ms,
        "claim_ms_large": large_ms,
        "claimed_each_time": [small_taken, large_taken],
        "b_messages": len(sent),
        "b_webhook_non_2xx": len(sent) - len(asked),
        "b_events": len(latency),
        "b_event_p50_ms": round(percentile(latency, 50) * 1000, 1),
        "b_event_p99_ms": round(percentile(latency, 99) * 1000, 1),
        "a_endpoints_backed_off": a_state[0],
        "a_failures_in_a_row": int(a_state[1]),
    }
    log(f"backlog: {json.dumps(row)}")
    lost = len(sent) - len(latency)
    twice = max(0, len(live.requests) - len(asked))
    p99 = row["b_event_p99_ms"]
    return {
        "targets": {
            "events: claim ms at 500,000 pending / at 1,000": target(
                ratio, ratio <= 2, goal="<= 2"
            ),
            "fairness: event p99 ms beside 500,000 dead deliveries": target(
                p99, p99 <= 3000 and lost == 0 and twice == 0, goal="<= 3,000, none lost or twice"
            ),
        },
        **row,
    }
