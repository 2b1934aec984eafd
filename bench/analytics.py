"""The `analytics` scenario: 90 days of figures for an organization whose rollup counts
10 million chats (bench/analytics_seed.py), read by one client at a time so that the
latency is the request's own (`GET /api/analytics/messages`, all numbers, JSON); then
what keeping the figures costs the inbound and status webhooks
(bench/analytics_webhooks.py).
"""

import json
import math
import time
from datetime import UTC, datetime, timedelta

from bench import analytics_webhooks
from bench.load import wrk_once
from bench.report import target
from bench.stack import Stack, log

FULL = {"chats": 10_000_000, "days": 90, "duration": 10, "warmup": 2}
QUICK = {**FULL, "duration": 2, "warmup": 1}


def percentile_ms(run: dict, p: float) -> float:
    """The p-th percentile of one wrk run's latency histogram, in milliseconds."""
    histogram = sorted(run["histogram_us"])
    answered = sum(count for _, count in histogram)
    rank, seen = max(1, math.ceil(p / 100 * answered)), 0
    for value, count in histogram:
        seen += count
        if seen >= rank:
            return round(value / 1000, 2)
    return 0.0


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    seed = ("bench.analytics_seed", json.dumps({"chats": config["chats"], "days": 365}))
    began = time.monotonic()
    with Stack(template, seed_module=seed, stand_in=False) as stack:
        log(f"analytics: seeded in {time.monotonic() - began:.0f} s")
        token = json.loads(stack.seeded)["token"]
        today = datetime.now(UTC).date()
        start = today - timedelta(days=config["days"] - 1)
        path = f"/api/analytics/messages?from={start.isoformat()}&to={today.isoformat()}"
        options = dict(path=path, token=token, connections=1, scratch=stack.scratch)
        wrk_once(stack.base, duration=config["warmup"], **options)
        measured = wrk_once(stack.base, duration=config["duration"], **options)
    p95 = percentile_ms(measured, 95)
    requests = measured["requests"]
    log(f"analytics: 90 days, {requests} requests, p95 {p95} ms")
    webhooks = analytics_webhooks.run(template, quick)
    return {
        "targets": {
            "analytics: 90 days over 10,000,000 chats, one client: p95 ms": target(
                p95, p95 < 300, goal="< 300"
            ),
            **webhooks.pop("targets"),
        },
        "requests": requests,
        "non_2xx": measured["errors"]["status"],
        "p50_ms": percentile_ms(measured, 50),
        "p95_ms": p95,
        "webhooks": webhooks,
    }
