"""The `events` scenario: event webhooks to an organization's endpoints (docs/events.md).

- **Fan-out**: inbound messages, each from a new sender, at a fixed rate (an open loop)
  to an organization with two endpoints on a loopback receiver that answers in 50 ms.
  Every `message.received` must reach both endpoints; the latency of a delivery is its
  arrival at the receiver minus the moment the inbound webhook's 200 came back.
- **Throughput**: inbound-message webhooks as fast as 8 wrk connections go, with the two
  endpoints on and off, in pairs of short rounds (off, on, on, off...), with statistics
  gathered before each as autovacuum would; the ratio is the cost of emitting. Once
  with the worker stopped (SIGSTOP) through the rounds, so that the web process is
  measured alone, and once with the worker delivering meanwhile on the same cores.
- **Receiver down**: another organization's endpoint whose receiver only starts after
  a while; every event must arrive once it is up, none twice. The retry schedule is
  shortened for it (WEBHOOK_RETRY_SCHEDULE=2,5,10,20,40,80): the default waits 5
  minutes before the third attempt.

The endpoints subscribe to `message.received` only: each message from a new sender is
also a `contact.created`, which would double the deliveries without measuring anything
new.
"""

import json
import time
from collections import Counter

from bench.load import busy_cpu_seconds, drive, percentile, wrk_once
from bench.payloads import ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID, signed_messages
from bench.report import target
from bench.stack import Stack, log, stopped
from devtools.loopback import free_port
from devtools.webhook_receiver import WebhookReceiver

FULL = {"messages": 1000, "rate": 100, "round_s": 3, "pairs": 16, "down": 100, "down_s": 30}
QUICK = {"messages": 100, "rate": 50, "round_s": 1, "pairs": 2, "down": 20, "down_s": 5}
SEED = f"""
from accounts.services import create_organization
from events.services import create_endpoint
from business_numbers.services import configure_channel, save_channel
fan_out = create_organization(name="Bench events")
down = create_organization(name="Bench events, receiver down")
configure_channel(organization=fan_out, phone_number_id="{PHONE_NUMBER_ID}",
                  access_token="{ACCESS_TOKEN}", app_secret="{APP_SECRET}")
# A phone number id is one organization's: this one is on the sandbox, which takes
# every change (it only receives).
save_channel(down, dict(app_secret="{APP_SECRET}"))
for n in (1, 2):
    create_endpoint(organization=fan_out, url="{{url}}/" + str(n), events=["message.received"])
create_endpoint(organization=down, url="{{down_url}}", events=["message.received"])
print(fan_out.uuid, down.uuid)
"""


def received(receiver: WebhookReceiver) -> list[tuple[str, str, str, float]]:
    """(path, webhook-id, sender phone, arrival) of each request the receiver got."""
    found = []
    for request in list(receiver.requests):
        phone = json.loads(request.body)["data"]["contact"]["phone"]
        found.append((request.path, request.headers["webhook-id"], phone, request.at))
    return found


def fan_out(stack: Stack, organization: str, receiver: WebhookReceiver, config: dict) -> dict:
    receiver.requests.clear()
    phone_base = 447_600_000_000 + int(time.time()) % 100_000 * 1000
    url = f"{stack.base}/webhooks/whatsapp/{organization}"
    cpu_before = busy_cpu_seconds()
    sent = drive(url, config["rate"], config["messages"] / config["rate"], phone_base)
    answered = {phone: at + took for phone, at, status, took in sent if 200 <= status < 300}
    waited = time.monotonic()
    receiver.wait_for(2 * len(sent), timeout=120)
    settled = round(time.monotonic() - waited, 1)
    busy = busy_cpu_seconds() - cpu_before
    got = received(receiver)
    latencies = [at - answered[phone] for _, _, phone, at in got if phone in answered]
    ids = Counter((path, msg_id) for path, msg_id, *_ in got)
    expected = {(f"/hook/{n}", phone) for phone in answered for n in (1, 2)}
    return {
        "messages": len(sent),
        "webhook_non_2xx": len(sent) - len(answered),
        "deliveries_expected": len(expected),
        "deliveries_received": len(got),
        "missing": len(expected - {(path, phone) for path, _, phone, _ in got}),
        "duplicates": sum(count - 1 for count in ids.values()),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "max_ms": round(max(latencies, default=0) * 1000, 1),
        "webhook_p99_ms": round(percentile([t for *_, t in sent], 99) * 1000, 1),
        "settled_after_last_send_s": settled,
        "cpu_ms_per_message": round(busy * 1000 / max(1, len(sent)), 1),
    }


def abba(pairs: int) -> list[bool]:
    """Whether the endpoints are on in each round: off, on, on, off, off, on, ... so that
    a drift of the shared machine (its other processes, PostgreSQL's checkpoints, the
    tables growing) falls on both kinds alike."""
    return [(n % 4) in (1, 2) for n in range(2 * pairs)]


def set_endpoints_active(stack: Stack, organization: str, active: bool) -> None:
    stack.sql(
        "UPDATE events_endpoint SET is_active = %s WHERE organization_id = "
        "(SELECT id FROM accounts_organization WHERE uuid = %s) RETURNING 1",
        [active, organization],
    )


def throughput(stack: Stack, organization: str, config: dict, *, pause_worker: bool) -> dict:
    """The webhook's throughput without and with the two endpoints, in pairs of short
    rounds (abba()). Rounds of one kind differ by up to 30% on a shared machine, more
    than the effect measured, so the ratio is that of the sums over many rounds, with
    the spread of the pairs' own ratios beside it. Statistics are gathered before each
    round: without them the planner's choice for the sender's lookup flips, between
    20,000 and 30,000 contacts, to a walk of every contact of the organization."""
    path = f"/webhooks/whatsapp/{organization}"
    seconds = config["round_s"]
    rounds = []
    stack.wait_drained("before the throughput rounds")
    with stopped(stack.worker_pids() if pause_worker else [], stack.url):
        for active in abba(config["pairs"]):
            set_endpoints_active(stack, organization, active)
            stack.analyze()
            phone_base = 447_500_000_000 + int(time.time() * 10) % 90_000 * 1000
            run = wrk_once(
                stack.base,
                method="POST",
                path=path,
                signed=signed_messages(int(seconds * 1000), phone_base),
                connections=8,
                duration=seconds,
                scratch=stack.scratch,
            )
            rps = round(run["requests"] / (run["duration_us"] / 1e6), 1)
            rounds.append((active, rps, sum(run["errors"].values())))
            if not pause_worker:
                time.sleep(1)  # the worker's backlog, not the next round's
    set_endpoints_active(stack, organization, True)
    without = [rps for active, rps, _ in rounds if not active]
    with_ = [rps for active, rps, _ in rounds if active]
    pair_ratios = sorted(on / max(0.1, off) for on, off in zip(with_, without, strict=True))
    return {
        "worker_paused": pause_worker,
        "round_s": seconds,
        "rps_without_endpoints": without,
        "rps_with_two_endpoints": with_,
        "ratio": round(sum(with_) / max(0.1, sum(without)), 3),
        "pair_ratio_min_median_max": [
            round(pair_ratios[0], 3),
            round(percentile(pair_ratios, 50), 3),
            round(pair_ratios[-1], 3),
        ],
        "errors": sum(errors for *_, errors in rounds),
        "drained_after_s": stack.wait_drained("after the throughput rounds"),
    }


def receiver_down(stack: Stack, organization: str, port: int, config: dict) -> dict:
    url = f"{stack.base}/webhooks/whatsapp/{organization}"
    phone_base = 447_400_000_000 + int(time.time()) % 100_000 * 1000
    stack.wait_drained("before the receiver-down run")
    started = time.monotonic()
    sent = drive(url, 10, config["down"] / 10, phone_base)
    phones = {phone for phone, _, status, _ in sent if 200 <= status < 300}
    time.sleep(max(0.0, config["down_s"] - (time.monotonic() - started)))
    with WebhookReceiver(port=port) as receiver:
        up = time.monotonic()
        receiver.wait_for(len(phones), timeout=300)
        all_in = round(time.monotonic() - up, 1)
        time.sleep(5)  # anything arriving twice would come now
        got = received(receiver)
    ids = Counter(msg_id for _, msg_id, _, _ in got)
    arrived = {phone for _, _, phone, _ in got}
    return {
        "messages": len(sent),
        "down_s": config["down_s"],
        "delivered": len(arrived & phones),
        "missing": len(phones - arrived),
        "duplicates": sum(count - 1 for count in ids.values()),
        "all_delivered_after_up_s": all_in,
    }


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    down_port = free_port()
    settings = {
        "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
        "WEBHOOK_RETRY_SCHEDULE": "2,5,10,20,40,80",
        # Each endpoint gets 100 deliveries a second that take 50 ms: 5 under way at the
        # least, and one endpoint takes at most cap / answer time a second. The default
        # caps (4, 16) are for tenants that share; this organization has the stack alone.
        "WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT": "16",
        "WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION": "32",
    }
    with WebhookReceiver(delay=0.05) as receiver:
        seed = SEED.format(url=receiver.url, down_url=f"http://127.0.0.1:{down_port}/hook")
        with Stack(template, seed=seed, stand_in=False, **settings) as stack:
            fan_org, down_org = stack.seeded.split()
            drive(f"{stack.base}/webhooks/whatsapp/{fan_org}", 10, 2, 447_300_000_000)
            receiver.wait_for(40, timeout=30)
            stack.wait_drained("before the fan-out")
            rows = {"fan_out": fan_out(stack, fan_org, receiver, config)}
            log(f"events fan-out: {json.dumps(rows['fan_out'])}")
            for paused, name in ((True, "throughput_web_alone"), (False, "throughput")):
                rows[name] = throughput(stack, fan_org, config, pause_worker=paused)
                log(f"events {name}: {json.dumps(rows[name])}")
            rows["receiver_down"] = receiver_down(stack, down_org, down_port, config)
            log(f"events receiver down: {json.dumps(rows['receiver_down'])}")
    spread, down = rows["fan_out"], rows["receiver_down"]
    wrong = spread["missing"] + spread["duplicates"] + spread["webhook_non_2xx"]
    lost = down["missing"] + down["duplicates"]
    ratio = rows["throughput_web_alone"]["ratio"]
    return {
        "targets": {
            "event fan-out: deliveries missing or twice": target(wrong, wrong == 0, goal="0"),
            "event fan-out: p99 ms from the webhook's 200 to the delivery": target(
                spread["p99_ms"], spread["p99_ms"] < 1000, goal="< 1,000"
            ),
            "event webhook throughput with two endpoints / without, web alone": target(
                ratio, ratio >= 0.9, goal=">= 0.9"
            ),
            "events after the receiver was down: missing or twice": target(
                lost, lost == 0, goal="0"
            ),
        },
        "config": config,
        **rows,
    }
