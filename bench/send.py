"""The `send` scenario: `POST /api/send` through the Cloud API stand-in, which answers
every send after 200 ms, as WhatsApp's API takes about that long.

Twice. As fast as 32 connections go (a closed loop), which shows the ceiling; its
latency is the queue the loop builds in front of the server (32 requests always in
flight at 140 a second wait 230 ms each by construction). Then at 80 messages a second
offered, WhatsApp's default throughput per number: wrk sends one request every 12.5 ms
on a fixed schedule (an open loop, 64 connections so that one is always free), whatever
the answers do, and counts a request sent more than 5 ms after its time as late.
"""

import json

from bench.load import run_wrk, wrk_once
from bench.payloads import CLOUD_API_SEED
from bench.report import target
from bench.stack import Stack, log

RATE = 80


def run(template: str, quick: bool) -> dict:
    warmup, seconds = (1, 2) if quick else (2, 12)
    body = json.dumps({"phone": "+447000000001", "message": "Hello from the bench"}).encode()
    with Stack(template, seed=CLOUD_API_SEED) as stack:
        token = json.loads(stack.seeded)["token"]
        options = dict(method="POST", path="/api/send", token=token, body=body)
        options["scratch"] = stack.scratch
        rows = {}
        for name, connections, rate in (("closed_loop", 32, None), ("paced", 64, RATE)):
            stack.wait_drained(f"before the {name} sends")
            load = dict(connections=connections, rate=rate, **options)
            wrk_once(stack.base, duration=warmup, **load)
            row = run_wrk(stack.base, duration=seconds, **load)
            rows[name] = row
            log(
                f"send ({name}): {row['rps']} req/s, p50 {row['p50_ms']} ms, "
                f"p99 {row['p99_ms']} ms, non-2xx {row['non_2xx']}"
            )
    paced = rows["paced"]
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
        },
        "stand_in_delay_ms": 200,
        **rows,
    }
