"""The `send` scenario: `POST /api/send` through the Cloud API stand-in, which answers
every send after 200 ms, as WhatsApp's API takes about that long.

Three times. As fast as 32 connections go (a closed loop), which shows the ceiling; its
latency is the queue the loop builds in front of the server (32 requests always in
flight at 140 a second wait 230 ms each by construction). Then at 80 messages a second
offered, WhatsApp's default throughput per number: wrk sends one request every 12.5 ms
on a fixed schedule (an open loop, 64 connections so that one is always free), whatever
the answers do, and counts a request sent more than 5 ms after its time as late. Then
the same paced run with `from` naming the number (docs/numbers.md): the web process's
and PostgreSQL's CPU per send, with and without it, should be the same.
"""

import json

from bench import cpu
from bench.load import run_wrk, wrk_once
from bench.payloads import CLOUD_API_SEED, PHONE_NUMBER_ID
from bench.report import target
from bench.stack import Stack, log

SERVICE = ("web", "postgresql")

RATE = 80


def run(template: str, quick: bool) -> dict:
    warmup, seconds = (1, 2) if quick else (2, 12)
    message = {"phone": "+447000000001", "message": "Hello from the bench"}
    bodies = {
        "closed_loop": json.dumps(message).encode(),
        "paced": json.dumps(message).encode(),
        "paced_from": json.dumps({**message, "from": PHONE_NUMBER_ID}).encode(),
    }
    runs = (("closed_loop", 32, None), ("paced", 64, RATE), ("paced_from", 64, RATE))
    with Stack(template, seed=CLOUD_API_SEED) as stack:
        token = json.loads(stack.seeded)["token"]
        rows = {}
        for name, connections, rate in runs:
            stack.wait_drained(f"before the {name} sends")
            load = dict(
                method="POST",
                path="/api/send",
                token=token,
                body=bodies[name],
                scratch=stack.scratch,
                connections=connections,
                rate=rate,
            )
            wrk_once(stack.base, duration=warmup, **load)
            before = cpu.snapshot()
            row = run_wrk(stack.base, duration=seconds, **load)
            used = cpu.spent(before, cpu.snapshot())
            row["service_cpu_ms_per_send"] = round(
                sum(used.get(kind, 0.0) for kind in SERVICE) / max(1, row["requests"]), 3
            )
            rows[name] = row
            log(
                f"send ({name}): {row['rps']} req/s, p50 {row['p50_ms']} ms, "
                f"p99 {row['p99_ms']} ms, non-2xx {row['non_2xx']}"
            )
    paced = rows["paced"]
    with_from = rows["paced_from"]["service_cpu_ms_per_send"] / max(
        0.001, paced["service_cpu_ms_per_send"]
    )
    # Sustained: the offered rate went out on schedule (a request more than 5 ms late
    # means the server held every connection), and every send was answered 2xx.
    sustained = (
        paced["sent_rps"] >= 0.98 * RATE
        and paced["late"] <= 0.01 * paced["requests"]
        and paced["non_2xx"] == 0
        and paced["socket_errors"] == 0
    )
    return {
        "targets": {
            f"send at {RATE}/s offered: sent per second, none late, all 2xx": target(
                paced["sent_rps"], sustained, goal=f">= {0.98 * RATE:g}"
            ),
            f"send at {RATE}/s offered: p99 ms": target(
                paced["p99_ms"], paced["p99_ms"] < 600, goal="< 600"
            ),
            "send with from / without: service CPU per send": target(
                round(with_from, 3), with_from <= 1.1, goal="<= 1.1"
            ),
        },
        "stand_in_delay_ms": 200,
        **rows,
    }
