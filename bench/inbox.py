"""The `inbox` scenario: the conversations API on an organization with 100,000
conversations, one of them 10,000 messages long.

As in the `api` scenario (bench/api.py), every ratio is to the no-op (`GET /api/me`)
measured in the same run, in turns: rounds of a few seconds, each starting one scenario
later, and a ratio is the median over the rounds of the ratio within a round.
"""

import json
import time

from bench.api import measure
from bench.report import target
from bench.stack import Stack, log

FULL = {
    "conversations": 100_000,
    "messages": 10_000,
    "duration": 12,
    "warmup": 2,
    "rounds": 6,
    "round_seconds": 2,
}
QUICK = {**FULL, "conversations": 5_000, "messages": 1_000, "warmup": 1}
QUICK.update(rounds=2, round_seconds=1)


def scenarios(config: dict, seeded: dict) -> list[dict]:
    """In order; the first is the baseline of every ratio."""
    token = seeded["token"]
    return [
        {
            "name": "noop",
            "interleave": True,
            "label": "1. GET /api/me (no-op)",
            "path": "/api/me",
            "token": token,
        },
        {
            "name": "conversations",
            "interleave": True,
            "label": f"2. GET /api/conversations, {config['conversations']:,} conversations",
            "path": "/api/conversations",
            "token": token,
        },
        {
            "name": "messages",
            "interleave": True,
            "label": f"3. GET /api/conversations/{{uuid}}/messages, {config['messages']:,} "
            "messages",
            "path": f"/api/conversations/{seeded['busiest']}/messages",
            "token": token,
        },
    ]


def targets(rows: list[dict]) -> dict:
    by = {row["name"]: row for row in rows}
    listed, messages = by["conversations"]["ratio_to_noop"], by["messages"]["ratio_to_noop"]
    return {
        "inbox: conversation list page 1, 100,000 conversations: throughput / no-op": target(
            listed, listed >= 0.5, goal=">= 0.5"
        ),
        "inbox: messages page 1, 10,000-message conversation: throughput / no-op": target(
            messages, messages >= 0.5, goal=">= 0.5"
        ),
    }


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    seed = ("bench.inbox_seed", json.dumps(config))
    began = time.monotonic()
    with Stack(template, seed_module=seed, stand_in=False) as stack:
        log(f"inbox: seeded in {time.monotonic() - began:.0f} s")
        rows = measure(stack, scenarios(config, json.loads(stack.seeded)), config)
    return {
        "targets": targets(rows),
        "server": {"workers": 2, "threads": 32},
        "interleaved_rounds": [config["rounds"], config["round_seconds"]],
        "rows": rows,
    }
