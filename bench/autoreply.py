"""The `autoreply` scenario: an inbound message to its auto-reply at the stand-in.

Signed webhooks, each one text from a new sender that matches a canned reply, go out on
a fixed schedule (an open loop) at 20 and then 50 a second, each rate starting from a
drained queue. The stand-in writes down when each reply arrives (before its 200 ms
delay), so a message's latency is that moment minus the moment its webhook was sent:
the webhook, the commit, the worker noticing the task, and the send up to the wire.
Afterwards the task queue is watched until it is empty again.

Then, on purpose, a backlog: the same webhooks as fast as 8 wrk connections go, the
worker sending their replies meanwhile on the same cores; the webhook's throughput,
and how long the queue took to drain after it.
"""

import json
import time

from bench import cpu
from bench.load import busy_cpu_seconds, drive, percentile, run_wrk
from bench.payloads import CLOUD_API_SEED, signed_messages
from bench.report import target
from bench.stack import Stack, log

RATES = (20, 50)
SETTLE_SECONDS = 30


def arrivals(stack: Stack) -> dict[str, float]:
    """The first arrival at the stand-in of a send to each number."""
    first: dict[str, float] = {}
    for line in stack.arrivals.read_text().splitlines():
        to, _, at = line.partition("\t")
        if to and at:
            first.setdefault(to, float(at))
    return first


def paced(stack: Stack, organization: str, rate: float, seconds: float) -> dict:
    """One paced run; its latencies, losses and how the queue drained."""
    phone_base = 447_900_000_000 + int(time.time() * 1000) % 1_000_000 * 100
    url = f"{stack.base}/webhooks/whatsapp/{organization}"
    cpu_before, processes_before = busy_cpu_seconds(), cpu.snapshot()
    sent = drive(url, rate, seconds, phone_base)
    ended = time.monotonic()
    phones = {phone for phone, *_ in sent}
    while time.monotonic() - ended < SETTLE_SECONDS and not phones <= arrivals(stack).keys():
        time.sleep(0.2)
    replied = arrivals(stack)
    busy = busy_cpu_seconds() - cpu_before
    by_process = cpu.spent(processes_before, cpu.snapshot())
    latencies = [replied[phone] - at for phone, at, *_ in sent if phone in replied]
    depth = sum(stack.backlog().values())
    while depth and time.monotonic() - ended < SETTLE_SECONDS:
        time.sleep(0.2)
        depth = sum(stack.backlog().values())
    webhook = [took for *_, took in sent]
    per_message = max(1, len(sent))
    return {
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
        "queue_after": depth,
        "queue_empty_after_s": round(time.monotonic() - ended, 1),
        # Machine-wide until the last reply arrived (an upper bound of one message and
        # its reply), and by kind of process (bench/cpu.py).
        "cpu_ms_per_message": round(busy * 1000 / per_message, 1),
        "cpu_ms_per_message_by_process": {
            kind: round(ms / per_message, 1) for kind, ms in by_process.items()
        },
    }


def backlog(stack: Stack, organization: str, seconds: float) -> dict:
    """Inbound-message webhooks as fast as 8 connections go, each owed a reply, with the
    worker sending meanwhile; then the seconds until every reply was sent."""
    signed = signed_messages(max(2000, int(seconds * 400)), 447_800_000_000)
    row = run_wrk(
        stack.base,
        method="POST",
        path=f"/webhooks/whatsapp/{organization}",
        signed=signed,
        connections=8,
        duration=seconds,
        scratch=stack.scratch,
    )
    queued = stack.backlog()["tasks"]
    row["replies_queued_at_end"] = queued
    row["drained_after_s"] = stack.wait_drained("after the webhooks' backlog")
    return row


def run(template: str, quick: bool) -> dict:
    seconds = 2 if quick else 10
    with Stack(template, seed=CLOUD_API_SEED, TASK_WORKER_THREADS="16") as stack:
        organization = json.loads(stack.seeded)["uuid"]
        drive(f"{stack.base}/webhooks/whatsapp/{organization}", 10, 2, 447_700_000_000)
        rows = {}
        for rate in RATES:
            stack.wait_drained(f"before the auto-replies at {rate}/s")
            row = rows[f"{rate}_per_s"] = paced(stack, organization, rate, seconds)
            log(
                f"auto-reply at {rate}/s: p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms, "
                f"{row['replied']} of {row['messages']} replied, webhook p99 "
                f"{row['webhook_p99_ms']} ms, queue {row['queue_after']}"
            )
        stack.wait_drained("before the webhooks' backlog")
        rows["webhook_backlog"] = backlog(stack, organization, seconds)
        log(
            f"inbound-message webhooks, 8 connections: {rows['webhook_backlog']['rps']} req/s, "
            f"replies drained {rows['webhook_backlog']['drained_after_s']} s after"
        )
    top = rows[f"{max(RATES)}_per_s"]
    left = max(rows[f"{rate}_per_s"]["queue_after"] for rate in RATES)
    return {
        "targets": {
            f"auto-reply at {max(RATES)}/s: p99 ms, none lost": target(
                top["p99_ms"], top["p99_ms"] < 500 and top["lost"] == 0, goal="< 500"
            ),
            "auto-reply: tasks left 30 s after the last message": target(left, left == 0, goal="0"),
        },
        "task_worker_threads": 16,
        **rows,
    }
