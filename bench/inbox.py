"""The `inbox` scenario: the conversations API on an organization with 100,000
conversations, one of them 10,000 messages long, and the cost of open inbox pages.

As in the `api` scenario (bench/api.py), every ratio is to the no-op (`GET /api/me`)
measured in the same run, in turns: rounds of a few seconds, each starting one scenario
later, and a ratio is the median over the rounds of the ratio within a round.

Open pages: 50 admin inbox pages each ask their live check every two seconds with the
ETag they have (inbox/live.py), 25 requests a second in all, answered 304 while nothing
changes. Their cost is the share of the service's capacity they take, read from the CPU
the service's processes spend (bench/cpu.py): what the pages alone cost it a second,
beyond what it spends idle, over what the no-op at full load costs it a second. The
pages' own polling (fifty threads of this driver, on the same two cores) is not the
service's and is left out; the share of the no-op's throughput that the polling takes
(the no-op at full load with the pages polling, against it alone, in alternate turns)
is reported beside it, with the driver's threads in it and a spread larger than the
target from one round to the next.
"""

import http.client
import json
import math
import statistics
import threading
import time
from urllib.parse import urlsplit

from bench import cpu
from bench.api import measure
from bench.load import summarize, wrk_once
from bench.report import target
from bench.stack import Stack, log

FULL = {
    "conversations": 100_000,
    "messages": 10_000,
    "duration": 12,
    "warmup": 2,
    "rounds": 6,
    "round_seconds": 2,
    "live_pages": 50,
    "live_every": 2.0,  # seconds between two checks of one page, as inbox/static's script
    "live_rounds": 10,
    "live_round_seconds": 3,
    "cpu_rounds": 4,
    "cpu_seconds": 4,
}
QUICK = {**FULL, "conversations": 5_000, "messages": 1_000, "warmup": 1}
QUICK.update(rounds=2, round_seconds=1, live_rounds=2, live_round_seconds=1, cpu_rounds=1)
# The service's processes: the web server, the task worker and the database's backends.
SERVICE = ("web", "worker", "postgresql")


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


class OpenPages:
    """Open inbox pages checking their live URL, each every `every` seconds (spread over
    the interval), with the ETag they last got, over a connection of their own (opened
    again when the server closed an idle one, as a browser does). Checking while
    `polling` is set; each answer's status and time are kept."""

    def __init__(self, base: str, paths: list[str], every: float) -> None:
        self.address = urlsplit(base)
        self.paths, self.every = paths, every
        self.polling = threading.Event()
        self.stopped = threading.Event()
        self.answers: list[tuple[int, float]] = []
        self.failures: list[str] = []
        self.start = time.monotonic()
        self.threads = [
            threading.Thread(target=self.page, args=(n, path), daemon=True)
            for n, path in enumerate(paths)
        ]

    def __enter__(self) -> "OpenPages":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stopped.set()
        self.polling.set()  # wakes the waiting pages, which then see `stopped`
        for thread in self.threads:
            thread.join(timeout=30)

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.address.hostname, self.address.port, timeout=30)

    def check(
        self, connection: http.client.HTTPConnection, path: str, etag: str
    ) -> tuple[http.client.HTTPConnection, int, str]:
        """One check; again on a new connection when the server closed the idle one."""
        try:
            return connection, *self.ask(connection, path, etag)
        except (http.client.HTTPException, ConnectionError):
            connection.close()
            connection = self.connect()
            return connection, *self.ask(connection, path, etag)

    @staticmethod
    def ask(connection: http.client.HTTPConnection, path: str, etag: str) -> tuple[int, str]:
        connection.request("GET", path, headers={"If-None-Match": etag} if etag else {})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("ETag") or etag

    def page(self, n: int, path: str) -> None:
        try:
            self.poll(n, path)
        except Exception as error:  # a page that stops checking fails the run
            self.failures.append(f"{path[:40]}...: {error!r}")

    def poll(self, n: int, path: str) -> None:
        connection = self.connect()
        connection, status, etag = self.check(connection, path, "")  # the page's first ETag
        if status != 200:
            raise RuntimeError(f"live check {path[:40]}...: {status}")
        offset = self.every * n / len(self.paths)  # the pages' checks spread evenly
        while not self.stopped.is_set():
            self.polling.wait()
            now = time.monotonic()
            turns = math.ceil((now - self.start - offset) / self.every)
            time.sleep(max(0.0, self.start + offset + turns * self.every - now))
            if self.stopped.is_set() or not self.polling.is_set():
                continue
            started = time.monotonic()
            connection, status, etag = self.check(connection, path, etag)
            self.answers.append((status, time.monotonic() - started))
        connection.close()


def live_cost(stack: Stack, seeded: dict, config: dict) -> dict:
    """The no-op at full load with the open pages polling and without, in turns (which
    goes first alternates by round); the cost is 1 - with / without, the median over
    the rounds."""
    noop = dict(path="/api/me", token=seeded["token"], connections=32, scratch=stack.scratch)
    alone, polled = [], []
    stack.wait_drained("before the open pages")
    with OpenPages(stack.base, seeded["live"], config["live_every"]) as pages:
        wrk_once(stack.base, duration=config["warmup"], **noop)
        for round_number in range(config["live_rounds"]):
            for polling in (round_number % 2 == 0, round_number % 2 == 1):
                if polling:
                    pages.polling.set()
                    time.sleep(config["live_every"])  # every page has checked once
                    since = len(pages.answers)
                    began = time.monotonic()
                run = wrk_once(stack.base, duration=config["live_round_seconds"], **noop)
                if polling:
                    pages.polling.clear()
                    rate = (len(pages.answers) - since) / (time.monotonic() - began)
                    polled.append({**run, "live_rps": rate})
                else:
                    alone.append(run)
    if pages.failures:
        raise RuntimeError(f"open pages stopped checking: {pages.failures[:3]}")
    costs = [
        1 - (p["requests"] / p["duration_us"]) / (a["requests"] / a["duration_us"])
        for p, a in zip(polled, alone, strict=True)
    ]
    statuses = [status for status, _ in pages.answers]
    seconds = sorted(seconds for _, seconds in pages.answers)
    return {
        "pages": len(seeded["live"]),
        "every_seconds": config["live_every"],
        "checks_per_second": round(statistics.median(p["live_rps"] for p in polled), 1),
        "checks": len(statuses),
        "not_modified": statuses.count(304),
        "other_statuses": len(statuses) - statuses.count(304),
        "check_p50_ms": round(seconds[len(seconds) // 2] * 1000, 2),
        "check_p99_ms": round(seconds[int(len(seconds) * 0.99)] * 1000, 2),
        "noop_alone": summarize(alone, connections=32),
        "noop_with_pages": summarize(polled, connections=32),
        "cost_per_round": [round(cost, 3) for cost in costs],
        "cost": round(statistics.median(costs), 3),
    }


def service_cpu_ms(stack: Stack, spend) -> float:
    """Milliseconds of CPU the service's processes used while `spend()` ran."""
    before = stack.cpu_snapshot()
    spend()
    used = cpu.spent(before, stack.cpu_snapshot())
    return sum(used.get(kind, 0.0) for kind in SERVICE)


def live_cpu_share(stack: Stack, seeded: dict, config: dict) -> dict:
    """The open pages' cost as a share of the service's capacity, by CPU: in each round,
    `cpu_seconds` idle, then with the pages polling, then with the no-op at full load
    (wrk, 32 connections); the share is (pages - idle) / (no-op - idle), the median
    over the rounds."""
    seconds = config["cpu_seconds"]
    noop = dict(path="/api/me", token=seeded["token"], connections=32, scratch=stack.scratch)
    idle, polling, full, checks = [], [], [], []
    stack.wait_drained("before the open pages' CPU")
    with OpenPages(stack.base, seeded["live"], config["live_every"]) as pages:
        wrk_once(stack.base, duration=config["warmup"], **noop)
        for _ in range(config["cpu_rounds"]):
            idle.append(service_cpu_ms(stack, lambda: time.sleep(seconds)))
            pages.polling.set()
            time.sleep(config["live_every"])  # every page has checked once
            since = len(pages.answers)
            polling.append(service_cpu_ms(stack, lambda: time.sleep(seconds)))
            checks.append((len(pages.answers) - since) / seconds)
            pages.polling.clear()
            full.append(
                service_cpu_ms(stack, lambda: wrk_once(stack.base, duration=seconds, **noop))
            )
    if pages.failures:
        raise RuntimeError(f"open pages stopped checking: {pages.failures[:3]}")
    shares = [(p - i) / max(1.0, f - i) for i, p, f in zip(idle, polling, full, strict=True)]
    return {
        "seconds": seconds,
        "checks_per_second": round(statistics.median(checks), 1),
        "idle_cpu_ms_per_s": [round(ms / seconds, 1) for ms in idle],
        "pages_cpu_ms_per_s": [round(ms / seconds, 1) for ms in polling],
        "noop_cpu_ms_per_s": [round(ms / seconds, 1) for ms in full],
        "share_per_round": [round(share, 3) for share in shares],
        "share": round(statistics.median(shares), 3),
    }


def one_client(stack: Stack, seeded: dict, config: dict) -> dict:
    """A conversation page's live check and the no-op, one client at a time: the p50 of
    each, whose ratio is what one check costs in no-ops, apart from the load's noise."""
    figures = {}
    for name, path, token in (
        ("noop", "/api/me", seeded["token"]),
        ("live_check", seeded["live"][-1], None),
    ):
        options = dict(path=path, token=token, connections=1, scratch=stack.scratch)
        wrk_once(stack.base, duration=config["warmup"], **options)
        run = wrk_once(stack.base, duration=config["live_round_seconds"], **options)
        figures[f"{name}_p50_ms"] = summarize([run], connections=1)["p50_ms"]
    figures["check_per_noop"] = round(figures["live_check_p50_ms"] / figures["noop_p50_ms"], 2)
    return figures


def targets(rows: list[dict], live: dict) -> dict:
    by = {row["name"]: row for row in rows}
    listed, messages = by["conversations"]["ratio_to_noop"], by["messages"]["ratio_to_noop"]
    cost = live["cpu"]["share"]
    return {
        "inbox: conversation list page 1, 100,000 conversations: throughput / no-op": target(
            listed, listed >= 0.5, goal=">= 0.5"
        ),
        "inbox: messages page 1, 10,000-message conversation: throughput / no-op": target(
            messages, messages >= 0.5, goal=">= 0.5"
        ),
        "inbox: 50 inbox pages open and live: share of the no-op's capacity": target(
            cost, cost <= 0.10, goal="<= 0.10"
        ),
    }


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    seed = ("bench.inbox_seed", json.dumps(config))
    began = time.monotonic()
    with Stack(template, seed_module=seed, stand_in=False) as stack:
        log(f"inbox: seeded in {time.monotonic() - began:.0f} s")
        seeded = json.loads(stack.seeded)
        rows = measure(stack, scenarios(config, seeded), config)
        live = live_cost(stack, seeded, config)
        live["cpu"] = live_cpu_share(stack, seeded, config)
        live["one_client"] = one_client(stack, seeded, config)
        log(
            f"{live['pages']} open inbox pages, {live['checks_per_second']} checks/s "
            f"({live['not_modified']} of {live['checks']} answered 304, p50 "
            f"{live['check_p50_ms']} ms): {live['cpu']['share']} of the service's CPU at "
            f"capacity (per round {live['cpu']['share_per_round']}, idle / pages / no-op "
            f"{live['cpu']['idle_cpu_ms_per_s']} / {live['cpu']['pages_cpu_ms_per_s']} / "
            f"{live['cpu']['noop_cpu_ms_per_s']} ms a second); with the driver's polling, "
            f"{live['cost']} of the no-op's throughput (per round {live['cost_per_round']}); "
            "one client: a check's p50 is "
            f"{live['one_client']['check_per_noop']} of the no-op's"
        )
    return {
        "targets": targets(rows, live),
        "server": {"workers": 2, "threads": 32},
        "interleaved_rounds": [config["rounds"], config["round_seconds"]],
        "rows": rows,
        "live": live,
    }
