"""The auto-reply scenario of `make bench`: an inbound message to its reply at the stand-in.

Signed webhooks, each carrying one text message from a new sender that matches a canned
reply, go out on a fixed schedule (an open loop, like wrk's paced runs) at a given rate.
The Cloud API stand-in writes down when each reply arrives (bench/cloud_stub.py with an
arrivals file, before its 200 ms delay), so a message's latency is that moment minus the
moment its webhook was sent: the webhook, the commit, the worker noticing the task, and
the send up to the wire. Afterwards the task queue is watched until it is empty again.

It also runs on its own against any checkout, to compare with the code before the tasks
(that one runs gunicorn as its Makefile did; a checkout with a Procfile runs honcho):

    .venv/bin/python -m bench.autoreply --root /path/to/checkout --rates 20,50 --seconds 10
"""

import argparse
import hashlib
import hmac
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import requests

from bench import cpu

ROOT = Path(__file__).resolve().parent.parent
APP_SECRET = "bench-app-secret"
TRIGGER, ANSWER = "hello", "Hello from the bench"
QUEUE_SQL = (
    "SELECT count(*) FROM django_tasks_database_dbtaskresult WHERE status IN ('READY', 'RUNNING')"
)


def message_body(phone: str, text: str = TRIGGER) -> bytes:
    """One webhook delivery: one text message from `phone`, with a message id of its own."""
    return json.dumps(
        {
            "object": "whatsapp_business_account",
            "entry": [
                {
                    "id": "100000000000000",
                    "changes": [
                        {
                            "field": "messages",
                            "value": {
                                "messaging_product": "whatsapp",
                                "metadata": {"phone_number_id": "100000000000001"},
                                "contacts": [{"profile": {"name": "Bench"}, "wa_id": phone}],
                                "messages": [
                                    {
                                        "from": phone,
                                        "id": f"wamid.in.{uuid.uuid4().hex}",
                                        "timestamp": str(int(time.time())),
                                        "type": "text",
                                        "text": {"body": f"{text} there"},
                                    }
                                ],
                            },
                        }
                    ],
                }
            ],
        }
    ).encode()


def signature(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signed_messages(count: int, phone_base: int) -> list[tuple[str, bytes]]:
    """`count` signed deliveries from distinct senders (for wrk's BENCH_SIGNED_FILE)."""
    bodies = [message_body(str(phone_base + n)) for n in range(count)]
    return [(signature(body), body) for body in bodies]


def drive(url: str, rate: float, seconds: float, phone_base: int) -> list[tuple]:
    """Send rate x seconds webhooks on a fixed schedule; (phone, sent at, status, seconds)."""
    total = int(rate * seconds)
    results: list[tuple] = [None] * total
    local = threading.local()

    def send(n: int) -> None:
        if not hasattr(local, "session"):
            local.session = requests.Session()
            local.session.trust_env = False
        phone = str(phone_base + n)
        body = message_body(phone)
        headers = {"Content-Type": "application/json", "X-Hub-Signature-256": signature(body)}
        started = time.time()
        try:
            status = local.session.post(url, data=body, headers=headers, timeout=30).status_code
        except requests.RequestException:
            status = 0
        results[n] = (phone, started, status, time.time() - started)

    with ThreadPoolExecutor(32) as pool:
        start = time.monotonic()
        for n in range(total):
            wait = start + n / rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            pool.submit(send, n)
    return results


def arrivals(path: Path) -> dict[str, float]:
    """The first arrival at the stand-in of a send to each number."""
    first: dict[str, float] = {}
    for line in path.read_text().splitlines():
        to, _, at = line.partition("\t")
        if to and at:
            first.setdefault(to, float(at))
    return first


def busy_cpu_seconds() -> float:
    """CPU time the whole machine has spent busy since boot (/proc/stat): around a run,
    what it cost every process together (the server, the worker, PostgreSQL, this
    driver and the stand-in, and whatever else runs on the machine)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def queue_depth(database_url: str) -> int | None:
    """Ready and running tasks; None where there is no task table (the code before it)."""
    try:
        with psycopg.connect(database_url, autocommit=True) as conn:
            return conn.execute(QUEUE_SQL).fetchone()[0]
    except psycopg.errors.UndefinedTable:
        return None


def run(
    base: str,
    organization_uuid: str,
    *,
    rate: float,
    seconds: float,
    arrivals_path: Path,
    database_url: str,
    settle: float = 30,
) -> dict:
    """One paced run; its latencies, losses and how the queue drained."""
    phone_base = 447_900_000_000 + int(time.time() * 1000) % 1_000_000 * 100
    url = f"{base}/webhooks/whatsapp/{organization_uuid}"
    cpu_before = busy_cpu_seconds()
    processes_before = cpu.snapshot()
    system_before = cpu.snapshot(system_only=True)
    sent = drive(url, rate, seconds, phone_base)
    ended = time.monotonic()
    phones = {phone for phone, *_ in sent}
    while time.monotonic() - ended < settle:
        if phones <= arrivals(arrivals_path).keys():
            break
        time.sleep(0.2)
    replied = arrivals(arrivals_path)
    busy = busy_cpu_seconds() - cpu_before
    by_process = cpu.spent(processes_before, cpu.snapshot())
    system = cpu.spent(system_before, cpu.snapshot(system_only=True))
    latencies = [replied[phone] - at for phone, at, *_ in sent if phone in replied]
    depth = queue_depth(database_url)
    drained = 0.0 if depth is not None else None
    while depth and time.monotonic() - ended < settle:
        time.sleep(0.2)
        depth = queue_depth(database_url)
        drained = round(time.monotonic() - ended, 1)
    webhook = [took for _, _, status, took in sent]
    return {
        "name": f"autoreply_{rate:g}",
        "label": f"9. inbound message to its auto-reply at the stand-in, {rate:g} msg/s",
        "offered_rps": rate,
        "messages": len(sent),
        "replied": len(latencies),
        "lost": len(sent) - len(latencies),
        "non_2xx": sum(1 for _, _, status, _ in sent if not 200 <= status < 300),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "max_ms": round(max(latencies, default=0) * 1000, 1),
        "webhook_p50_ms": round(percentile(webhook, 50) * 1000, 1),
        "webhook_p99_ms": round(percentile(webhook, 99) * 1000, 1),
        "queue_depth_after": depth,
        "queue_drained_after_s": drained,
        # Machine-wide, until the last reply arrived: an upper bound of the cost of one
        # message and its reply.
        "cpu_ms_per_message": round(busy * 1000 / max(1, len(sent)), 1),
        # The same by kind of process (bench/cpu.py): where it went.
        "cpu_ms_per_message_by_process": {
            kind: round(ms / max(1, len(sent)), 1) for kind, ms in by_process.items()
        },
        "system_cpu_ms_per_message_by_process": {
            kind: round(ms / max(1, len(sent)), 1) for kind, ms in system.items()
        },
    }


# On its own, against a checkout.

SEED = f"""
from accounts.services import create_organization
from canned_replies.services import create_canned_reply
from sending.services import configure_channel
org = create_organization(name="Bench auto-replies")
configure_channel(organization=org, phone_number_id="100000000000001",
                  access_token="bench-token", app_secret="{APP_SECRET}")
create_canned_reply(organization=org, name="greeting", trigger="{TRIGGER}",
                    match_criteria="contains", response="{ANSWER}")
print(org.uuid)
"""


def start_server(root: Path, env: dict, port: int, log) -> subprocess.Popen:
    bin_dir = Path(sys.executable).parent
    if (root / "Procfile").exists():
        command = [str(bin_dir / "honcho"), "start", "--no-colour"]
        env = {**env, "PATH": f"{bin_dir}:{env['PATH']}", "PORT": str(port)}
    else:  # before the Procfile: the gunicorn line of its Makefile
        command = [
            str(bin_dir / "gunicorn"),
            "messaging_project.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--no-control-socket",
            "--worker-class",
            "gthread",
            "--workers",
            env["WORKERS"],
            "--threads",
            env["THREADS"],
            "--reuse-port",
            "--graceful-timeout",
            "10",
        ]
    return subprocess.Popen(
        command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def throughput(base: str, organization_uuid: str, seconds: float, scratch: Path) -> dict:
    """Inbound-message webhooks as fast as 8 connections go (wrk), each a new message."""
    from bench.run import run_wrk

    signed = signed_messages(max(2000, int(seconds * 400)), 447_800_000_000)
    return run_wrk(
        base,
        method="POST",
        path=f"/webhooks/whatsapp/{organization_uuid}",
        signed=[(sig, body) for sig, body in signed],
        connections=8,
        duration=seconds,
        scratch=scratch,
    )


def status_throughput(base: str, organization_uuid: str, seconds: float, scratch: Path) -> dict:
    """make bench's webhook scenario: deliveries of 100 status updates, 8 connections."""
    from bench.run import run_wrk, webhook_body

    bodies = [webhook_body(100, 1 + n * 100) for n in range(32)]
    return run_wrk(
        base,
        method="POST",
        path=f"/webhooks/whatsapp/{organization_uuid}",
        signed=[(signature(body), body) for body in bodies],
        connections=8,
        duration=seconds,
        scratch=scratch,
    )


def webhook_throughput(base, organization_uuid, server, database_url, args, scratch) -> list:
    """The webhook rows: status updates, then inbound messages, each with the worker
    running and with it paused (SIGSTOP), so that the web process is measured alone too.
    The code before the tasks has no worker to pause (its replies are sent by threads of
    the web process), so it has no `_web_alone` rows. Each row starts with the task
    queue empty."""
    from bench.processes import stopped, worker_pids

    workers = worker_pids(server)
    rows = []
    for kind, measure in (("statuses", status_throughput), ("messages", throughput)):
        for paused in (False, True) if workers else (False,):
            with stopped(workers if paused else []):
                row = measure(base, organization_uuid, args.throughput_seconds, scratch)
            drained_within(database_url, 120)
            name = f"webhook_{kind}" + ("_web_alone" if paused else "")
            rows.append({"name": name, "worker_paused": paused, **row})
    return rows


def drained_within(database_url: str, seconds: float) -> None:
    """Wait until the task queue is empty (or `seconds` passed)."""
    ended = time.monotonic() + seconds
    while (queue_depth(database_url) or 0) and time.monotonic() < ended:
        time.sleep(0.5)


def main() -> None:
    from bench.processes import (
        migrate_and_seed,
        scenario_environment,
        start_stand_in,
        stop_process_groups,
    )
    from bench.run import REDIS_PORT, create_database, drop_database, free_port, reachable, wait_for

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--rates", default="20,50", help="messages per second, comma-separated")
    parser.add_argument("--seconds", type=float, default=10, help="seconds at each rate")
    parser.add_argument("--throughput-seconds", type=float, default=8)
    parser.add_argument(
        "--worker-threads",
        default="16",
        help="TASK_WORKER_THREADS; 8 sends at most as many replies at once as the thread pool",
    )
    args = parser.parse_args()
    root = args.root.resolve()
    scratch = Path(tempfile.mkdtemp(prefix="bench-autoreply-"))
    db_name, db_url = create_database()
    processes: list[subprocess.Popen] = []
    try:
        env = scenario_environment(
            db_url,
            scratch,
            # Redis as the cache when it answers, as make bench and production have it.
            REDIS_URL=f"redis://127.0.0.1:{REDIS_PORT}/13" if reachable(REDIS_PORT) else "",
            WORKERS="2",
            THREADS="32",
            TASK_WORKER_THREADS=args.worker_threads,
        )
        if env["REDIS_URL"]:
            import redis

            redis.Redis.from_url(env["REDIS_URL"]).flushdb()
        organization_uuid = migrate_and_seed(root, env, SEED).split()[-1]
        stub, stub_port, arrivals_path = start_stand_in(scratch)
        processes.append(stub)
        port = free_port()
        env["WHATSAPP_GRAPH_URL"] = f"http://127.0.0.1:{stub_port}/v21.0"
        log = (scratch / "server.log").open("w")
        processes.append(start_server(root, env, port, log))
        wait_for(port, "the server")
        base = f"http://127.0.0.1:{port}"
        time.sleep(3)  # the worker starts after the web process answers
        drive(f"{base}/webhooks/whatsapp/{organization_uuid}", 10, 2, 447_700_000_000)  # warm-up
        time.sleep(2)
        rows = [
            run(
                base,
                organization_uuid,
                rate=float(rate),
                seconds=args.seconds,
                arrivals_path=arrivals_path,
                database_url=db_url,
            )
            for rate in args.rates.split(",")
        ]
        rows += webhook_throughput(base, organization_uuid, processes[-1], db_url, args, scratch)
        print(
            json.dumps({"root": str(root), "procfile": (root / "Procfile").exists(), "rows": rows})
        )
    finally:
        stop_process_groups(processes)
        drop_database(db_name)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
