"""The `api` scenario: the API against its own stack's limit, on 1.1 million contacts.

Every ratio is to the no-op (`GET /api/me`) measured in the same run, so the figures
compare the service with its own plumbing rather than with another machine. The no-op,
the three lists and the deep page run in turns (rounds of a few seconds, each round
starting one scenario later), and a ratio is the median over the rounds of the ratio
within a round. The writes and the status webhook run once each after a warm-up. Then
one client at a time (the deep page against page 1), the rate limit's burst, and the
canned-reply matching in process (bench/matching.py).
"""

import json
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from bench.load import paired_ratio, run_wrk, summarize, wrk_once
from bench.payloads import signature, status_body
from bench.report import target
from bench.stack import PYTHON, Stack, log, peak_rss_kib

JSON = {"Content-Type": "application/json"}
BURST_CLIENTS, BURST_REQUESTS_EACH, BURST_LIMIT = 8, 25, 60
FULL = {
    "contacts": [10_000, 100_000, 1_000_000],
    "replies": 10_000,
    "chats": 3200,
    "duration": 12,
    "warmup": 2,
    "rounds": 6,
    "round_seconds": 2,
}
QUICK = {**FULL, "contacts": [1_000, 5_000, 20_000], "chats": 800, "duration": 2, "warmup": 1}
QUICK.update(rounds=2, round_seconds=1)


def scenarios(config: dict, seeded: dict) -> list[dict]:
    """In order; the first is the baseline of every ratio."""
    orgs = seeded["organizations"]
    small, middle, large = (orgs[f"contacts_{n}"] for n in config["contacts"])
    deep_page = (large["contacts"] * 9 // 10) // 10  # offset about 90% in, 10 per page
    send_body = json.dumps({"phone": "+447000000001", "message": "Hello from the bench"})
    # Distinct deliveries, each for its own 100 chats, sent in turn: concurrent
    # deliveries do not queue on the same chats' row locks (the channel avoids that too).
    hooks = [status_body(100, 1 + i * 100) for i in range(config["chats"] // 100)]
    lists = [
        {
            "name": f"list_{size}",
            "interleave": True,
            "label": f"2. GET /api/contacts, {org['contacts']:,} contacts",
            "path": "/api/contacts",
            "token": org["token"],
            "size": org["contacts"],
        }
        for size, org in zip(("small", "middle", "large"), (small, middle, large), strict=True)
    ]
    return [
        {
            "name": "noop",
            "interleave": True,
            "label": "1. GET /api/me (no-op)",
            "path": "/api/me",
            "token": small["token"],
        },
        *lists,
        {
            "name": "deep_page",
            "interleave": True,
            "label": f"3. GET /api/contacts?page={deep_page:,} ({large['contacts']:,} contacts)",
            "path": f"/api/contacts?page={deep_page}",
            "token": large["token"],
        },
        {
            "name": "create_contact",
            "label": "4. POST /api/contacts",
            "method": "POST",
            "path": "/api/contacts",
            "token": orgs["writes"]["token"],
            "new_phone": True,
        },
        {
            "name": "send_sandbox",
            "label": "5. POST /api/send (sandbox)",
            "method": "POST",
            "path": "/api/send",
            "token": orgs["writes"]["token"],
            "body": send_body.encode(),
        },
        {
            "name": "webhook_statuses",
            "label": "7. POST webhook, 100 status updates (8 connections)",
            "method": "POST",
            "path": f"/webhooks/whatsapp/{small['uuid']}",
            "signed": [(signature(hook), hook) for hook in hooks],
            "connections": 8,
        },
    ]


def check(base: str, scenario: dict) -> None:
    """One request before the load, so that a broken scenario fails instead of timing
    its 4xx."""
    response = requests.request(
        scenario.get("method", "GET"),
        base + scenario["path"],
        data=scenario.get("body"),
        headers={"Authorization": f"Bearer {scenario['token']}", **JSON},
        timeout=30,
    )
    if response.status_code >= 300:
        raise RuntimeError(f"{scenario['label']}: {response.status_code} {response.text[:300]}")


def measure(stack: Stack, chosen: list[dict], config: dict) -> list[dict]:
    """Each scenario after a warm-up: the interleaved ones in turns, the others in one go."""
    runs: dict[str, list[dict]] = {}
    options = {}
    for scenario in chosen:
        if not scenario.get("new_phone") and not scenario.get("signed"):
            check(stack.base, scenario)
        options[scenario["name"]] = dict(
            method=scenario.get("method", "GET"),
            path=scenario["path"],
            token=scenario.get("token"),
            body=scenario.get("body"),
            signed=scenario.get("signed"),
            new_phone=scenario.get("new_phone", False),
            connections=scenario.get("connections", 32),
            scratch=stack.scratch,
        )
    for scenario in chosen:
        if not scenario.get("interleave"):
            stack.wait_drained(f"before {scenario['name']}")
            option = options[scenario["name"]]
            wrk_once(stack.base, duration=config["warmup"], **option)
            runs[scenario["name"]] = [wrk_once(stack.base, duration=config["duration"], **option)]
    interleaved = [scenario for scenario in chosen if scenario.get("interleave")]
    stack.wait_drained("before the interleaved rounds")
    for scenario in interleaved:
        wrk_once(stack.base, duration=config["warmup"], **options[scenario["name"]])
    for round_number in range(config["rounds"]):
        shift = round_number % len(interleaved)
        for scenario in interleaved[shift:] + interleaved[:shift]:
            option = options[scenario["name"]]
            run = wrk_once(stack.base, duration=config["round_seconds"], **option)
            runs.setdefault(scenario["name"], []).append(run)
    rows = []
    for scenario in chosen:
        row = {"name": scenario["name"], "label": scenario["label"]}
        connections = options[scenario["name"]]["connections"]
        row.update(summarize(runs[scenario["name"]], connections=connections))
        if "size" in scenario:
            row["organization_contacts"] = scenario["size"]
        rows.append(row)
        log(
            f"{row['label']}: {row['rps']} req/s, p50 {row['p50_ms']} ms, "
            f"p99 {row['p99_ms']} ms, non-2xx {row['non_2xx']}"
        )
    baseline = rows[0]
    for row in rows:
        if row["runs"] > 1 and row["runs"] == baseline["runs"]:
            row["ratio_to_noop"] = paired_ratio(row, baseline)
        else:  # measured apart from the no-op: only indicative
            row["ratio_to_noop"] = round(row["rps"] / baseline["rps"], 3)
    return rows


def one_client(stack: Stack, token: str, deep_path: str, config: dict) -> dict:
    """Page 1 and the deep page of the largest organization, one client at a time, so
    that the latency is the request's own and not the queue in front of it."""
    single = {}
    for name, path in (("page_1", "/api/contacts"), ("deep_page", deep_path)):
        options = dict(path=path, token=token, connections=1, scratch=stack.scratch)
        run_wrk(stack.base, duration=config["warmup"], **options)
        single[name] = run_wrk(stack.base, duration=max(3, config["duration"] / 2), **options)
    return single


def burst(base: str, token: str) -> dict:
    """8 clients at once against an organization limited to 60 requests a minute."""
    if time.time() % 60 > 45:  # a fixed window: start well inside one minute
        time.sleep(61 - time.time() % 60)

    def client(_):
        session = requests.Session()
        session.trust_env = False
        headers = {"Authorization": f"Bearer {token}"}
        return [
            session.get(f"{base}/api/me", headers=headers, timeout=30).status_code
            for _ in range(BURST_REQUESTS_EACH)
        ]

    with ThreadPoolExecutor(BURST_CLIENTS) as pool:
        statuses = [s for batch in pool.map(client, range(BURST_CLIENTS)) for s in batch]
    return {
        "clients": BURST_CLIENTS,
        "requests": len(statuses),
        "limit": BURST_LIMIT,
        "let_through": statuses.count(200),
        "refused_429": statuses.count(429),
        "other": len(statuses) - statuses.count(200) - statuses.count(429),
    }


def targets(rows: list[dict], single: dict, burst_result: dict, matching: dict) -> dict:
    by = {row["name"]: row for row in rows}
    deep_alone = round(single["deep_page"]["p50_ms"] / single["page_1"]["p50_ms"], 2)
    deep_loaded = round(by["deep_page"]["p50_ms"] / by["list_large"]["p50_ms"], 2)
    large = paired_ratio(by["list_large"], by["list_small"])
    small = by["list_small"]["ratio_to_noop"]
    let_through = burst_result["let_through"]
    per_message, queries = matching["per_message_us"], matching["queries_per_message"]
    return {
        "contacts list, smallest organization: throughput / no-op": target(
            small, small >= 0.6, goal=">= 0.6"
        ),
        "contacts list, largest organization: throughput / smallest's": target(
            large, large >= 0.8, goal=">= 0.8"
        ),
        "deep page p50 / page 1 p50, one client": target(deep_alone, deep_alone <= 3, goal="<= 3"),
        "deep page p50 / page 1 p50, under load": target(
            deep_loaded, deep_loaded <= 3, goal="<= 3"
        ),
        "rate limit: requests let through of a 200 burst": target(
            let_through, let_through == BURST_LIMIT, goal=f"exactly {BURST_LIMIT}"
        ),
        "canned-reply matching, µs per message": target(
            per_message, per_message < 1000, goal="< 1,000"
        ),
        "canned-reply matching, queries per message": target(queries, queries <= 1, goal="<= 1"),
    }


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    seed = ("bench.seed", json.dumps(config))
    t = time.monotonic()
    with Stack(template, seed_module=seed, stand_in=False) as stack:
        log(f"api: seeded {sum(config['contacts']):,} contacts in {time.monotonic() - t:.0f} s")
        seeded = json.loads(stack.seeded)
        orgs = seeded["organizations"]
        chosen = scenarios(config, seeded)
        rows = measure(stack, chosen, config)
        stack.wait_drained("before the one-client runs")
        large = orgs[f"contacts_{config['contacts'][-1]}"]["token"]
        deep_path = next(s["path"] for s in chosen if s["name"] == "deep_page")
        single = one_client(stack, large, deep_path, config)
        log(
            f"one client, largest organization: page 1 p50 {single['page_1']['p50_ms']} ms, "
            f"deep page p50 {single['deep_page']['p50_ms']} ms"
        )
        memory = {str(pid): round(peak_rss_kib(pid) / 1024, 1) for pid in stack.web_pids()}
        burst_result = burst(stack.base, orgs["burst"]["token"])
        log(f"burst: {burst_result['let_through']} of {burst_result['requests']} let through")
        small = orgs[f"contacts_{config['contacts'][0]}"]["uuid"]
        matching = json.loads(stack.run([PYTHON, "-m", "bench.matching", small]))
        log(f"matching: {matching['per_message_us']} µs, {matching['queries_per_message']} queries")
    return {
        "targets": targets(rows, single, burst_result, matching),
        "server": {"workers": 2, "threads": 32},
        "seconds_per_scenario": config["duration"],
        "interleaved_rounds": [config["rounds"], config["round_seconds"]],
        "rows": rows,
        "single_client": single,
        "web_peak_rss_mib": memory,
        "rate_limit_burst": burst_result,
        "matching": matching,
    }
