"""Load and its figures: wrk runs (closed loop, or paced on a fixed schedule) merged into
exact percentiles, a paced Python client for webhooks whose answers are timed one by
one, and the machine's busy CPU around a run."""

import json
import math
import os
import statistics
import subprocess
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from bench.payloads import message_body, signature

LUA = Path(__file__).resolve().parent / "wrk" / "scenario.lua"


def wrk_once(
    base: str,
    *,
    method: str = "GET",
    path: str,
    token: str | None = None,
    body: bytes | None = None,
    signed: list[tuple[str, bytes]] | None = None,
    new_phone: bool = False,
    rate: float | None = None,
    connections: int,
    duration: float,
    scratch: Path,
) -> dict:
    """One wrk run; its counts and whole latency histogram (see bench/wrk/scenario.lua)."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if body is not None or new_phone or signed:
        headers["Content-Type"] = "application/json"
    env = {
        **os.environ,
        "BENCH_METHOD": method,
        "BENCH_PATH": path,
        "BENCH_HEADERS": "\n".join(f"{k}: {v}" for k, v in headers.items()),
        "BENCH_NEW_PHONE": "1" if new_phone else "0",
        "BENCH_PHONE_BASE": str(int(time.time() * 1000) % 10_000_000 * 10),
        "BENCH_BODY_FILE": "",
        "BENCH_SIGNED_FILE": "",
        "BENCH_RATE": str(rate or 0),
    }
    if signed:
        signed_file = scratch / f"signed-{uuid.uuid4().hex[:8]}.tsv"
        signed_file.write_bytes(b"".join(f"{sig}\t".encode() + raw + b"\n" for sig, raw in signed))
        env["BENCH_SIGNED_FILE"] = str(signed_file)
    if body is not None:
        body_file = scratch / f"body-{uuid.uuid4().hex[:8]}.json"
        body_file.write_bytes(body)
        env["BENCH_BODY_FILE"] = str(body_file)
    command = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(duration))}s"]
    command += ["--timeout", "10s", "-s", str(LUA), base + path]
    output = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    for line in output.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            return json.loads(line.removeprefix("BENCH_RESULT "))
    raise RuntimeError(f"wrk gave no result for {path}:\n{output.stdout}\n{output.stderr}")


def summarize(runs: list[dict], *, connections: int, rate: float | None = None) -> dict:
    """One scenario's figures from one or more wrk runs: their histograms merged, so the
    percentiles are exact over every request of every run."""
    histogram: Counter[int] = Counter()
    for run in runs:
        for value, count in run["histogram_us"]:
            histogram[value] += count
    answered = sum(histogram.values())
    values = sorted(histogram)

    def percentile_ms(p: float) -> float:
        rank, seen = max(1, math.ceil(p / 100 * answered)), 0
        for value in values:
            seen += histogram[value]
            if seen >= rank:
                return round(value / 1000, 2)
        return 0.0

    seconds = sum(run["duration_us"] for run in runs) / 1e6
    errors: Counter[str] = Counter()
    for run in runs:
        errors.update(run["errors"])
    row = {
        "requests": sum(run["requests"] for run in runs),
        "rps": round(sum(run["requests"] for run in runs) / seconds, 1),
        "p50_ms": percentile_ms(50),
        "p90_ms": percentile_ms(90),
        "p99_ms": percentile_ms(99),
        "max_ms": round(values[-1] / 1000, 2) if values else 0.0,
        "non_2xx": errors["status"],
        "socket_errors": errors["connect"] + errors["read"] + errors["write"] + errors["timeout"],
        "connections": connections,
        "seconds": round(seconds, 1),
        "runs": len(runs),
        "rps_per_run": [round(run["requests"] / (run["duration_us"] / 1e6), 1) for run in runs],
    }
    if rate:
        sent = sum(run["sent"] for run in runs)
        row.update(
            offered_rps=rate, sent_rps=round(sent / seconds, 1), late=sum(r["late"] for r in runs)
        )
    return row


def run_wrk(base: str, **options) -> dict:
    run = wrk_once(base, **options)
    return summarize([run], connections=options["connections"], rate=options.get("rate"))


def paired_ratio(row: dict, baseline: dict) -> float:
    """The median over the rounds of row's throughput / baseline's in the same round.

    The machine's capacity moves (other processes share its cores); one round measures
    every interleaved scenario within seconds, so a ratio within a round compares like
    with like, and the median drops the rounds a busy moment fell into."""
    pairs = zip(row["rps_per_run"], baseline["rps_per_run"], strict=True)
    return round(statistics.median(a / b for a, b in pairs), 3)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def drive(url: str, rate: float, seconds: float, phone_base: int) -> list[tuple]:
    """Inbound-message webhooks, each from a new sender, `rate` a second for `seconds` on
    a fixed schedule (an open loop); (phone, sent at, status, seconds to answer) each."""
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


def busy_cpu_seconds() -> float:
    """CPU time the whole machine has spent busy since boot (/proc/stat): around a run,
    what it cost every process together (the server, the worker, PostgreSQL, the load
    and the stand-in, and whatever else runs on the machine)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")
