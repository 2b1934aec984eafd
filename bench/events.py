"""The event webhooks scenario of the benchmark (docs/events.md, docs/performance.md).

- **Fan-out**: inbound messages, each from a new sender, at a fixed rate (an open loop)
  to an organization with two endpoints on a loopback receiver that answers in 50 ms.
  Every `message.received` must reach both endpoints; the latency of a delivery is its
  arrival at the receiver minus the moment the inbound webhook's 200 came back.
- **Throughput**: inbound-message webhooks as fast as 8 wrk connections go, with the
  two endpoints and with them turned off, in 16 pairs of 3 s rounds (off, on, on,
  off...), with statistics gathered before each as autovacuum would; the ratio is the
  cost of emitting.
- **Receiver down**: another organization's endpoint whose receiver only starts after
  `--down-seconds`; every event must arrive once it is up, none twice. The retry
  schedule is shortened for it (WEBHOOK_RETRY_SCHEDULE=2,5,10,20,40,80): the default
  waits 5 minutes before the third attempt.

The endpoints subscribe to `message.received` only: each inbound message from a new
sender is also a `contact.created`, which would double the deliveries without
measuring anything new.

    .venv/bin/python -m bench.events                     # 1,000 messages at 100/s
    .venv/bin/python -m bench.events --messages 200 --rate 50 --down-seconds 10
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.autoreply import (  # noqa: E402
    APP_SECRET,
    busy_cpu_seconds,
    drive,
    percentile,
    signed_messages,
    start_server,
)
from bench.processes import (  # noqa: E402
    migrate_and_seed,
    scenario_environment,
    stop_process_groups,
    stopped,
    worker_pids,
)
from devtools.loopback import free_port, reachable, wait_until_listening  # noqa: E402
from devtools.webhook_receiver import WebhookReceiver  # noqa: E402

SEED = """
import sys
from accounts.services import create_organization
from events.services import create_endpoint
from sending.services import configure_channel
fan_out = create_organization(name="Bench events")
down = create_organization(name="Bench events, receiver down")
for org in (fan_out, down):
    configure_channel(organization=org, phone_number_id="100000000000001",
                      access_token="bench-token", app_secret="{secret}")
for n in (1, 2):
    create_endpoint(organization=fan_out, url="{url}/" + str(n), events=["message.received"])
create_endpoint(organization=down, url="{down_url}", events=["message.received"])
print(fan_out.uuid, down.uuid)
"""


def log(message: str) -> None:
    print(f"[bench events {time.strftime('%H:%M:%S')}] {message}", flush=True)


def received(receiver: WebhookReceiver) -> list[tuple[str, str, str, float]]:
    """(path, webhook-id, sender phone, arrival) of each request the receiver got."""
    found = []
    for request in list(receiver.requests):
        body = json.loads(request.body)
        found.append(
            (
                request.path,
                request.headers["webhook-id"],
                body["data"]["contact"]["phone"],
                request.at,
            )
        )
    return found


def wait_for_deliveries(receiver: WebhookReceiver, expected: int, timeout: float) -> float:
    """Seconds until `expected` requests had arrived (or the timeout passed)."""
    started = time.monotonic()
    receiver.wait_for(expected, timeout)
    return round(time.monotonic() - started, 1)


def fan_out(base: str, organization: str, receiver: WebhookReceiver, *, messages, rate) -> dict:
    receiver.requests.clear()
    phone_base = 447_600_000_000 + int(time.time()) % 100_000 * 1000
    cpu_before = busy_cpu_seconds()
    sent = drive(f"{base}/webhooks/whatsapp/{organization}", rate, messages / rate, phone_base)
    answered = {phone: at + took for phone, at, status, took in sent if 200 <= status < 300}
    settled = wait_for_deliveries(receiver, 2 * len(sent), timeout=120)
    cpu = busy_cpu_seconds() - cpu_before
    got = received(receiver)
    latencies = [at - answered[phone] for _, _, phone, at in got if phone in answered]
    per_endpoint = Counter(path for path, *_ in got)
    ids = Counter((path, msg_id) for path, msg_id, *_ in got)
    phones = {(path, phone) for path, _, phone, _ in got}
    expected = {(f"/hook/{n}", phone) for phone in answered for n in (1, 2)}
    return {
        "name": "events_fan_out",
        "messages": len(sent),
        "webhook_non_2xx": sum(1 for _, _, status, _ in sent if not 200 <= status < 300),
        "deliveries_expected": 2 * len(answered),
        "deliveries_received": len(got),
        "missing": len(expected - phones),
        "duplicates": sum(count - 1 for count in ids.values()),
        "per_endpoint": dict(per_endpoint),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "max_ms": round(max(latencies, default=0) * 1000, 1),
        "webhook_p99_ms": round(percentile([t for *_, t in sent], 99) * 1000, 1),
        "settled_after_last_send_s": settled,
        "cpu_ms_per_message": round(cpu * 1000 / max(1, len(sent)), 1),
    }


def closed_loop(base: str, path: str, seconds: float, scratch: Path) -> dict:
    """Inbound-message webhooks as fast as 8 connections go, each from a new sender;
    requests a second. Sent by wrk, whose CPU is a tenth of a Python client's: on two
    cores the client's share is taken from the server it measures."""
    from bench.run import wrk_once

    phone_base = 447_500_000_000 + int(time.time() * 10) % 90_000 * 1000  # 1,000 a 0.1 s
    run = wrk_once(
        base,
        method="POST",
        path=path,
        signed=signed_messages(int(seconds * 1000), phone_base),
        connections=8,
        duration=seconds,
        scratch=scratch,
    )
    errors = sum(run["errors"].values())
    return {"rps": round(run["requests"] / (run["duration_us"] / 1e6), 1), "errors": errors}


def set_endpoints_active(database_url: str, organization: str, active: bool) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE events_endpoint SET is_active = %s WHERE organization_id = "
            "(SELECT id FROM accounts_organization WHERE uuid = %s)",
            [active, organization],
        )


def abba(pairs: int) -> list[bool]:
    """Whether the endpoints are on in each round: off, on, on, off, off, on, ... so that
    a drift of the shared machine (its other processes, PostgreSQL's checkpoints, the
    tables growing) falls on both kinds alike."""
    return [(n % 4) in (1, 2) for n in range(2 * pairs)]


def analyze(database_url: str) -> None:
    """What autovacuum would have done by now: statistics for the tables the run grows.
    This machine's PostgreSQL runs without autovacuum (production's runs with it), and
    without statistics the planner's choice for the sender's lookup flips, somewhere
    between 20,000 and 30,000 contacts, to a walk of every contact of the organization
    (15 ms at 30,000): the rounds after that point measured the flip, not the emission."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ANALYZE")


def pending_deliveries(database_url: str) -> int:
    """The deliveries not yet finished, and the events not yet fanned out into theirs."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        query = (
            "SELECT (SELECT count(*) FROM events_delivery WHERE status = 'pending')"
            " + (SELECT count(*) FROM events_emission)"
        )
        return conn.execute(query).fetchone()[0]


def throughput(
    base, organization, database_url, server, seconds, pairs, scratch, *, pause_worker
) -> dict:
    """The web process's webhook throughput without and with the two endpoints, in
    `pairs` pairs of short rounds (abba()). Rounds of one kind differ by up to 30% on
    this machine, more than the effect measured, so the ratio is that of the sums over
    many rounds, with the spread of the pairs' own ratios beside it.
    With `pause_worker` the worker is stopped (SIGSTOP) through every round, so the web
    process is measured alone; the deliveries queued meanwhile are made afterwards."""
    path = f"/webhooks/whatsapp/{organization}"
    workers = worker_pids(server) if pause_worker else []
    rounds = []
    with stopped(workers, database_url):
        for active in abba(pairs):
            set_endpoints_active(database_url, organization, active)
            analyze(database_url)
            rounds.append((active, closed_loop(base, path, seconds, scratch)))
            if not pause_worker:
                time.sleep(1)  # the worker's backlog, not the next round's
    set_endpoints_active(database_url, organization, True)
    deadline = time.monotonic() + 300
    while pending_deliveries(database_url) and time.monotonic() < deadline:
        time.sleep(1)  # the worker catches up before the next scenario
    without = [r["rps"] for active, r in rounds if not active]
    with_ = [r["rps"] for active, r in rounds if active]
    pair_ratios = sorted(on / max(0.1, off) for on, off in zip(with_, without, strict=True))
    return {
        "name": "events_webhook_throughput" + ("_web_alone" if pause_worker else ""),
        "worker_paused": bool(workers),
        "rounds_s": seconds,
        "rps_without_endpoints": without,
        "rps_with_two_endpoints": with_,
        "ratio": round(sum(with_) / max(0.1, sum(without)), 3),
        "pair_ratio_min_median_max": [
            round(pair_ratios[0], 3),
            round(percentile(pair_ratios, 50), 3),
            round(pair_ratios[-1], 3),
        ],
        "errors": sum(r["errors"] for _, r in rounds),
    }


def receiver_down(base, organization, port, *, messages, rate, down_seconds) -> dict:
    url = f"{base}/webhooks/whatsapp/{organization}"
    phone_base = 447_400_000_000 + int(time.time()) % 100_000 * 1000
    started = time.monotonic()
    sent = drive(url, rate, messages / rate, phone_base)
    phones = {phone for phone, _, status, _ in sent if 200 <= status < 300}
    time.sleep(max(0.0, down_seconds - (time.monotonic() - started)))
    with WebhookReceiver(port=port) as receiver:
        log(f"  the receiver is up after {time.monotonic() - started:.0f} s")
        up = time.monotonic()
        receiver.wait_for(len(phones), timeout=300)
        all_in = round(time.monotonic() - up, 1)
        time.sleep(5)  # anything arriving twice would come now
        got = received(receiver)
    ids = Counter(msg_id for _, msg_id, _, _ in got)
    return {
        "name": "events_receiver_down",
        "messages": len(sent),
        "down_s": down_seconds,
        "delivered": len({phone for _, _, phone, _ in got} & phones),
        "missing": len(phones - {phone for _, _, phone, _ in got}),
        "duplicates": sum(count - 1 for count in ids.values()),
        "all_delivered_after_up_s": all_in,
    }


def main() -> None:
    from bench.run import REDIS_PORT, create_database, drop_database, ensure_wrk

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--throughput-seconds", type=float, default=3, help="seconds a round")
    parser.add_argument("--throughput-pairs", type=int, default=16, help="rounds of each kind")
    parser.add_argument("--down-messages", type=int, default=100)
    parser.add_argument("--down-seconds", type=float, default=30)
    args = parser.parse_args()
    ensure_wrk()
    scratch = Path(tempfile.mkdtemp(prefix="bench-events-"))
    db_name, db_url = create_database()
    processes: list[subprocess.Popen] = []
    try:
        with WebhookReceiver(delay=0.05) as receiver:
            down_port = free_port()
            env = scenario_environment(
                db_url,
                scratch,
                REDIS_URL=f"redis://127.0.0.1:{REDIS_PORT}/12" if reachable(REDIS_PORT) else "",
                WEBHOOK_ALLOW_PRIVATE_URLS="true",
                WEBHOOK_RETRY_SCHEDULE="2,5,10,20,40,80",
            )
            seed = SEED.format(
                secret=APP_SECRET,
                url=receiver.url,
                down_url=f"http://127.0.0.1:{down_port}/hook",
            )
            fan_org, down_org = migrate_and_seed(ROOT, env, seed).split()[-2:]
            port = free_port()
            server_log = (scratch / "server.log").open("w")
            processes.append(start_server(ROOT, env, port, server_log))
            if not wait_until_listening(port, timeout=120):
                raise SystemExit("the server did not start")
            base = f"http://127.0.0.1:{port}"
            time.sleep(3)  # the worker starts after the web process answers
            drive(f"{base}/webhooks/whatsapp/{fan_org}", 10, 2, 447_300_000_000)  # warm-up
            receiver.wait_for(40, timeout=30)
            rows = []
            log(f"fan-out: {args.messages} messages at {args.rate:g}/s, two endpoints")
            rows.append(fan_out(base, fan_org, receiver, messages=args.messages, rate=args.rate))
            log(json.dumps(rows[-1]))
            for pause_worker in (True, False):
                log(f"webhook throughput with and without the endpoints ({pause_worker=})")
                rows.append(
                    throughput(
                        base,
                        fan_org,
                        db_url,
                        processes[-1],
                        args.throughput_seconds,
                        args.throughput_pairs,
                        scratch,
                        pause_worker=pause_worker,
                    )
                )
                log(json.dumps(rows[-1]))
            log(f"receiver down for the first {args.down_seconds:g} s")
            rows.append(
                receiver_down(
                    base,
                    down_org,
                    down_port,
                    messages=args.down_messages,
                    rate=10,
                    down_seconds=args.down_seconds,
                )
            )
            log(json.dumps(rows[-1]))
            print(json.dumps({"rows": rows}, indent=2))
    finally:
        stop_process_groups(processes)
        drop_database(db_name)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
