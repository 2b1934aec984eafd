"""`make bench`: the service under load on this machine, against its own stack's limit.

Creates a scratch PostgreSQL database, seeds it in SQL, serves it with `make run`
(gunicorn, production settings, Redis when it answers), drives each scenario with wrk
on loopback for a fixed time, and writes bench/results/<timestamp>.json,
bench/results/latest.json and a chart. The scratch database is dropped at the end.

    .venv/bin/python bench/run.py            # the full run, about 6 minutes
    .venv/bin/python bench/run.py --quick    # a smoke run for CI: small data, 2 s each

Every ratio is to scenario 1 (the no-op endpoint) measured in the same run, so the
figures compare the service with its own stack rather than with another machine.
"""

import argparse
import contextlib
import hashlib
import hmac
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `python bench/run.py` as well as `python -m bench.run`

import psycopg  # noqa: E402
import requests  # noqa: E402

from bench import autoreply  # noqa: E402
from bench.processes import start_stand_in, stop_process_groups  # noqa: E402
from devtools.loopback import free_port, reachable, wait_until_listening  # noqa: E402

PYTHON = sys.executable
RESULTS = ROOT / "bench" / "results"
LUA = ROOT / "bench" / "wrk" / "scenario.lua"
ADMIN_URL = os.environ.get("BENCH_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_PORT = 6379
BURST_CLIENTS, BURST_REQUESTS_EACH, BURST_LIMIT = 8, 25, 60
SEND_RATE = 80  # WhatsApp's default throughput per number, messages a second
AUTOREPLY_RATES = (20, 50)  # inbound messages a second, each owed an auto-reply

FULL = {
    "contacts": [10_000, 100_000, 1_000_000],
    "replies": 10_000,
    "chats": 3200,
    "duration": 12,
    "warmup": 2,
    # The no-op, the lists and the deep page are compared with each other, so they run
    # in turns (rounds x seconds each) and a busy moment of the machine costs them alike.
    "rounds": 6,
    "round_seconds": 2,
}
QUICK = {
    "contacts": [1_000, 5_000, 20_000],
    "replies": 10_000,
    "chats": 800,
    "duration": 2,
    "warmup": 1,
    "rounds": 2,
    "round_seconds": 1,
}


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def wait_for(port: int, what: str, seconds: float = 120) -> None:
    if not wait_until_listening(port, timeout=seconds):
        raise SystemExit(f"{what} did not start on port {port}")


# The machine's tools.


def ensure_postgres() -> None:
    if reachable(5432):
        return
    log("PostgreSQL is not listening; trying to start it")
    for command in (["pg_ctlcluster", "15", "main", "start"], ["service", "postgresql", "start"]):
        if shutil.which(command[0]):
            subprocess.run(command, check=False)
            if reachable(5432):
                return
    raise SystemExit("PostgreSQL is not running on 127.0.0.1:5432 and could not be started.")


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    log("installing wrk from Debian's packages")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)
    return shutil.which("wrk") or "wrk"


def machine() -> dict:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    with psycopg.connect(ADMIN_URL) as conn:
        postgres = conn.execute("SHOW server_version").fetchone()[0]
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(memory_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "postgresql": postgres,
        "redis": reachable(REDIS_PORT),
        "wrk": subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split(
            "\n"
        )[0],
    }


# The scratch database.


def create_database() -> tuple[str, str]:
    name = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, f"postgres://postgres@127.0.0.1:5432/{name}"


def drop_database(name: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def vacuum(url: str) -> None:
    # Fresh bulk rows are not yet marked all-visible; autovacuum would do this in time.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


# The server.


class Server:
    """`make run` on a free port, in its own process group so it can be stopped whole."""

    def __init__(self, env: dict, threads: int | None, workers: int | None) -> None:
        self.port = free_port()
        command = ["make", "-s", "run", f"PORT={self.port}"]
        if threads:
            command.append(f"THREADS={threads}")
        if workers:
            command.append(f"WORKERS={workers}")
        self.log = open(env["VAR_DIR"] + "/server.log", "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for(self.port, "gunicorn")
        except SystemExit:
            self.stop()
            print(Path(env["VAR_DIR"], "server.log").read_text()[-3000:])
            raise

    def workers(self) -> list[int]:
        """The gunicorn worker pids: the children of the gunicorn master."""
        pids = descendants(self.process.pid)
        masters = [
            pid
            for pid in pids
            if "gunicorn" in cmdline(pid) and "gunicorn" not in cmdline(parent(pid))
        ]
        return [pid for master in masters for pid in children(master)]

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def descendants(pid: int) -> list[int]:
    result, queue = [], [pid]
    while queue:
        current = queue.pop()
        for child in children(current):
            result.append(child)
            queue.append(child)
    return result


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def peak_rss_mib(pid: int) -> float | None:
    """VmHWM: the most resident memory the process ever had."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


# Load.


def wrk_once(
    base: str,
    *,
    method: str = "GET",
    path: str,
    token: str | None = None,
    headers: dict | None = None,
    body: bytes | None = None,
    signed: list[tuple[str, bytes]] | None = None,
    new_phone: bool = False,
    rate: float | None = None,
    connections: int,
    duration: float,
    scratch: Path,
) -> dict:
    """One wrk run; its counts and whole latency histogram (see bench/wrk/scenario.lua)."""
    all_headers = {"Accept": "application/json", **(headers or {})}
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    if body is not None or new_phone or signed:
        all_headers["Content-Type"] = "application/json"
    env = {
        **os.environ,
        "BENCH_METHOD": method,
        "BENCH_PATH": path,
        "BENCH_HEADERS": "\n".join(f"{k}: {v}" for k, v in all_headers.items()),
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
    command = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{max(1, round(duration))}s",
        "--timeout",
        "10s",
        "-s",
        str(LUA),
        base + path,
    ]
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

    def percentile(p: float) -> float:
        rank, seen = max(1, math.ceil(p / 100 * answered)), 0
        for value in values:
            seen += histogram[value]
            if seen >= rank:
                return round(value / 1000, 2)
        return 0.0

    seconds = sum(run["duration_us"] for run in runs) / 1e6
    errors = Counter()
    for run in runs:
        errors.update(run["errors"])
    row = {
        "requests": sum(run["requests"] for run in runs),
        "rps": round(sum(run["requests"] for run in runs) / seconds, 1),
        "p50_ms": percentile(50),
        "p90_ms": percentile(90),
        "p99_ms": percentile(99),
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


def run_wrk(base: str, **kwargs) -> dict:
    return summarize(
        [wrk_once(base, **kwargs)], connections=kwargs["connections"], rate=kwargs.get("rate")
    )


def check(
    base: str,
    method: str,
    path: str,
    token: str,
    body: bytes | None = None,
    headers: dict | None = None,
) -> int:
    """One request before the load, so a broken scenario says why instead of timing 4xx."""
    all_headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        **(headers or {}),
    }
    response = requests.request(method, base + path, data=body, headers=all_headers, timeout=30)
    if response.status_code >= 300:
        log(f"  {method} {path} answered {response.status_code}: {response.text[:300]}")
    return response.status_code


def webhook_body(chats: int, first: int = 1) -> bytes:
    """One delivery of `chats` status updates, for the seeded chats wamid.bench.N."""
    now = int(time.time())
    statuses = [
        {
            "id": f"wamid.bench.{n}",
            "status": "delivered",
            "timestamp": str(now),
            "recipient_id": "447000000001",
        }
        for n in range(first, first + chats)
    ]
    payload = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "100000000000000",
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": "15550000000",
                                "phone_number_id": "100000000000001",
                            },
                            "statuses": statuses,
                        },
                    }
                ],
            }
        ],
    }
    return json.dumps(payload).encode()


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


def run_django(module: str, env: dict, *args: str) -> dict:
    output = subprocess.run(
        [PYTHON, "-m", module, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if output.returncode != 0:
        raise RuntimeError(f"{module} failed:\n{output.stderr[-3000:]}")
    return json.loads(output.stdout.strip().splitlines()[-1])


# The run.


def scenarios(config: dict, seeded: dict) -> list[dict]:
    """The issue's scenarios, in order; the first is the baseline for every ratio."""
    orgs = seeded["organizations"]
    small, middle, large = (orgs[f"contacts_{n}"] for n in config["contacts"])
    deep_page = (large["contacts"] * 9 // 10) // 10  # offset about 90% in, 10 per page
    cloud_body = json.dumps({"phone": "+447000000001", "message": "Hello from the bench"})
    # Distinct deliveries, each for its own 100 chats, sent in turn: concurrent
    # deliveries do not queue on the same chats' row locks (the channel avoids that too).
    secret = small["app_secret"].encode()
    hooks = [webhook_body(100, 1 + i * 100) for i in range(config["chats"] // 100)]
    signed = [("sha256=" + hmac.new(secret, h, hashlib.sha256).hexdigest(), h) for h in hooks]
    return [
        {
            "name": "noop",
            "interleave": True,
            "label": "1. GET /api/me (no-op)",
            "path": "/api/me",
            "token": small["token"],
        },
        {
            "name": "list_small",
            "interleave": True,
            "label": f"2. GET /api/contacts, {small['contacts']:,} contacts",
            "path": "/api/contacts",
            "token": small["token"],
            "size": small["contacts"],
        },
        {
            "name": "list_middle",
            "interleave": True,
            "label": f"2. GET /api/contacts, {middle['contacts']:,} contacts",
            "path": "/api/contacts",
            "token": middle["token"],
            "size": middle["contacts"],
        },
        {
            "name": "list_large",
            "interleave": True,
            "label": f"2. GET /api/contacts, {large['contacts']:,} contacts",
            "path": "/api/contacts",
            "token": large["token"],
            "size": large["contacts"],
        },
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
            "token": small["token"],
            "body": cloud_body.encode(),
        },
        {
            "name": "send_cloud_api",
            "label": "6. POST /api/send (stand-in, 200 ms), as fast as it goes",
            "method": "POST",
            "path": "/api/send",
            "token": orgs["cloud_api"]["token"],
            "body": cloud_body.encode(),
        },
        {
            # The target's own terms: 80 messages a second offered on a fixed schedule, so
            # the latency is the send's and not the queue a closed loop builds in front
            # of it (there, latency = connections / throughput by construction).
            "name": "send_cloud_api_paced",
            "label": f"6. POST /api/send (stand-in, 200 ms), {SEND_RATE} msg/s offered",
            "method": "POST",
            "path": "/api/send",
            "token": orgs["cloud_api"]["token"],
            "body": cloud_body.encode(),
            "rate": SEND_RATE,
            "connections": 64,
        },
        {
            # Each delivery one new message that matches a canned reply: the webhook also
            # writes the reply it is owed and its task; the worker sends them meanwhile.
            "name": "webhook_messages",
            "label": "7. POST webhook, 1 inbound message owed an auto-reply (8 connections)",
            # Last: the replies it leaves queued would otherwise load the others' runs.
            "last": True,
            "method": "POST",
            "path": f"/webhooks/whatsapp/{orgs['cloud_api']['uuid']}",
            "signed": autoreply.signed_messages(
                int(config["duration"] + config["warmup"]) * 400, 447_600_000_000
            ),
            "connections": 8,
        },
        {
            "name": "webhook",
            "label": "7. POST webhook, 100 status updates (8 connections)",
            "method": "POST",
            "path": f"/webhooks/whatsapp/{small['uuid']}",
            "signed": signed,
            "connections": 8,
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small data, short runs (CI)")
    parser.add_argument("--duration", type=float, help="seconds of load per scenario")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument(
        "--threads", type=int, help="gunicorn threads per worker (make run's THREADS)"
    )
    parser.add_argument("--workers", type=int, help="gunicorn workers (make run's WORKERS)")
    parser.add_argument("--only", help="comma-separated scenario names to run")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument("--no-chart", action="store_true")
    args = parser.parse_args()
    config = dict(QUICK if args.quick else FULL)
    if args.duration:
        config["duration"] = args.duration
    started = time.time()

    ensure_postgres()
    ensure_wrk()
    scratch = Path(tempfile.mkdtemp(prefix="bench-"))
    db_name, db_url = create_database()
    log(f"scratch database {db_name}")
    server = stub = None
    try:
        env = {
            **os.environ,
            "DATABASE_URL": db_url,
            "REDIS_URL": f"redis://127.0.0.1:{REDIS_PORT}/14" if reachable(REDIS_PORT) else "",
            "DEBUG": "false",
            "SECRET_KEY": "bench-" + uuid.uuid4().hex,
            "VAR_DIR": str(scratch),
            "API_RATE_LIMIT": "100000000",
            "LOG_LEVEL": "WARNING",
        }
        if env["REDIS_URL"]:
            import redis

            redis.Redis.from_url(env["REDIS_URL"]).flushdb()
        subprocess.run(
            [PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
        )
        t = time.time()
        seeded = run_django("bench.seed", env, json.dumps(config))
        vacuum(db_url)
        log(f"seeded {sum(config['contacts']):,} contacts in {time.time() - t:.0f} s")

        stub, stub_port, arrivals = start_stand_in(scratch)
        env["WHATSAPP_GRAPH_URL"] = f"http://127.0.0.1:{stub_port}/v21.0"
        server = Server(env, args.threads, args.workers)
        base = f"http://127.0.0.1:{server.port}"
        log(f"gunicorn (make run) on {base}")

        only = set(args.only.split(",")) if args.only else None
        chosen = [
            scenario
            for scenario in scenarios(config, seeded)
            if not only or scenario["name"] in only or scenario["name"] == "noop"
        ]
        first = [scenario for scenario in chosen if not scenario.get("last")]
        last = [scenario for scenario in chosen if scenario.get("last")]
        results = measure(base, first, config, args.connections, scratch)
        results += measure(base, last, config, args.connections, scratch)
        add_ratios(results)
        # Inbound message to auto-reply, paced (the old thread pool's figures are in
        # docs/performance.md; bench/autoreply.py measures any checkout), once the
        # replies queued by the scenario before have been sent.
        replies = []
        if not only or "autoreply" in only:
            drain_started = time.time()
            while autoreply.queue_depth(db_url) and time.time() - drain_started < 120:
                time.sleep(0.5)
            for rate in AUTOREPLY_RATES:
                replies.append(
                    autoreply.run(
                        base,
                        seeded["organizations"]["cloud_api"]["uuid"],
                        rate=rate,
                        seconds=config["duration"],
                        arrivals_path=arrivals,
                        database_url=db_url,
                    )
                )
                log_autoreply(replies[-1])

        # Deep page against page 1 of the same organization, one client at a time, so the
        # latency is the request's own and not the queue in front of it.
        large_token = seeded["organizations"][f"contacts_{config['contacts'][-1]}"]["token"]
        deep_path = next(s["path"] for s in scenarios(config, seeded) if s["name"] == "deep_page")
        single = {}
        for name, path in (("page_1", "/api/contacts"), ("deep_page", deep_path)):
            run_wrk(
                base,
                path=path,
                token=large_token,
                connections=1,
                duration=config["warmup"],
                scratch=scratch,
            )
            single[name] = run_wrk(
                base,
                path=path,
                token=large_token,
                connections=1,
                duration=max(3, config["duration"] / 2),
                scratch=scratch,
            )
        log(
            f"one client, largest organization: page 1 p50 {single['page_1']['p50_ms']} ms, "
            f"deep page p50 {single['deep_page']['p50_ms']} ms"
        )

        memory = {str(pid): peak_rss_mib(pid) for pid in server.workers()}
        burst_result = burst(base, seeded["organizations"]["burst"]["token"])
        log(
            f"burst: {burst_result['let_through']} of {burst_result['requests']} let through "
            f"(limit {BURST_LIMIT})"
        )
        server.stop()
        server = None
        matching = run_django(
            "bench.matching",
            env,
            seeded["organizations"][f"contacts_{config['contacts'][0]}"]["uuid"],
        )
        log(
            f"matching: {matching['per_message_us']} µs per message, "
            f"{matching['queries_per_message']} queries per message"
        )

        report = {
            "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
            "quick": args.quick,
            "machine": machine(),
            "server": {
                "command": "make run",
                "workers": args.workers or make_default("WORKERS"),
                "threads": args.threads or make_default("THREADS"),
                "cache": "redis" if env["REDIS_URL"] else "database",
            },
            "seconds_per_scenario": config["duration"],
            "interleaved_rounds": [config["rounds"], config["round_seconds"]],
            "scenarios": results,
            "single_client": single,
            "worker_peak_rss_mib": memory,
            "rate_limit_burst": burst_result,
            "matching": matching,
            "autoreply": replies,
            "targets": targets(results, single, burst_result, matching, replies),
            "run_seconds": round(time.time() - started),
        }
        write(report, chart=not args.no_chart)
    finally:
        if server is not None:
            server.stop()
        if stub is not None:
            stop_process_groups([stub], timeout=10)
        if args.keep_database:
            log(f"kept database {db_name}")
        else:
            drop_database(db_name)
        shutil.rmtree(scratch, ignore_errors=True)


def measure(
    base: str, chosen: list[dict], config: dict, connections: int, scratch: Path
) -> list[dict]:
    """Each scenario after a warm-up: the interleaved ones in turns, the others in one go."""
    runs: dict[str, list[dict]] = {}
    rows: dict[str, dict] = {}
    options = {}
    for scenario in chosen:
        method = scenario.get("method", "GET")
        if not scenario.get("new_phone") and not scenario.get("signed"):
            scenario["check_status"] = check(
                base,
                method,
                scenario["path"],
                scenario.get("token", ""),
                scenario.get("body"),
                scenario.get("headers"),
            )
        options[scenario["name"]] = dict(
            method=method,
            path=scenario["path"],
            token=scenario.get("token"),
            headers=scenario.get("headers"),
            body=scenario.get("body"),
            signed=scenario.get("signed"),
            new_phone=scenario.get("new_phone", False),
            rate=scenario.get("rate"),
            connections=scenario.get("connections", connections),
            scratch=scratch,
        )
        wrk_once(base, duration=config["warmup"], **options[scenario["name"]])
        if not scenario.get("interleave"):
            runs[scenario["name"]] = [
                wrk_once(base, duration=config["duration"], **options[scenario["name"]])
            ]
            rows[scenario["name"]] = summarize_scenario(scenario, runs, options)
            log_row(rows[scenario["name"]])
    interleaved = [scenario for scenario in chosen if scenario.get("interleave")]
    for round_number in range(config["rounds"]):
        # Each round starts one scenario later, so none always follows the same one.
        shift = round_number % max(1, len(interleaved))
        for scenario in interleaved[shift:] + interleaved[:shift]:
            run = wrk_once(base, duration=config["round_seconds"], **options[scenario["name"]])
            runs.setdefault(scenario["name"], []).append(run)
    for scenario in interleaved:
        rows[scenario["name"]] = summarize_scenario(scenario, runs, options)
        log_row(rows[scenario["name"]])
    return [rows[scenario["name"]] for scenario in chosen]


def summarize_scenario(scenario: dict, runs: dict, options: dict) -> dict:
    """A scenario's row of the results: its name, label and figures."""
    option = options[scenario["name"]]
    measured = summarize(
        runs[scenario["name"]], connections=option["connections"], rate=option["rate"]
    )
    row = {"name": scenario["name"], "label": scenario["label"], **measured}
    if "size" in scenario:
        row["organization_contacts"] = scenario["size"]
    return row


def log_row(row: dict) -> None:
    paced = f", sent {row['sent_rps']}/s, late {row['late']}" if "offered_rps" in row else ""
    log(
        f"{row['label']}: {row['rps']} req/s, p50 {row['p50_ms']} ms, "
        f"p99 {row['p99_ms']} ms, non-2xx {row['non_2xx']}{paced}"
    )


def paired_ratio(row: dict, baseline: dict) -> float:
    """The median over the rounds of row's throughput / baseline's in the same round.

    The machine's capacity moves (other tenants of the host share its cores); one round
    measures every interleaved scenario within seconds, so a ratio within a round
    compares like with like, and the median drops the rounds a busy moment fell into."""
    pairs = zip(row["rps_per_run"], baseline["rps_per_run"], strict=True)
    return round(statistics.median(a / b for a, b in pairs), 3)


def add_ratios(results: list[dict]) -> None:
    """Each scenario's ratio to the no-op: paired by round for the interleaved ones, else
    of the whole runs' throughputs (measured minutes apart, so only indicative)."""
    baseline = results[0]
    for row in results:
        if row["runs"] > 1 and row["runs"] == baseline["runs"]:
            row["ratio_to_noop"] = paired_ratio(row, baseline)
        else:
            row["ratio_to_noop"] = round(row["rps"] / baseline["rps"], 3)


def make_default(name: str) -> int:
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith(f"{name} ?="):
            return int(line.split("=", 1)[1])
    return 0


def log_autoreply(row: dict) -> None:
    log(
        f"{row['label']}: p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms, "
        f"{row['replied']} of {row['messages']} replied, webhook p99 {row['webhook_p99_ms']} "
        f"ms, queue {row['queue_depth_after']} after {row['queue_drained_after_s']} s"
    )


def targets(
    results: list[dict], single: dict, burst_result: dict, matching: dict, replies: list[dict]
) -> dict:
    """The issue's targets, each with the measured value and whether it holds."""
    by = {row["name"]: row for row in results}
    out = {}

    def target(name, value, holds):
        out[name] = {"value": value, "holds": bool(holds)}

    if "list_small" in by:
        ratio = by["list_small"]["ratio_to_noop"]
        target("list_small >= 0.6 x noop", ratio, ratio >= 0.6)
    if "list_large" in by and "list_small" in by:
        ratio = paired_ratio(by["list_large"], by["list_small"])
        target("list_large >= 0.8 x list_small", ratio, ratio >= 0.8)
    ratio = round(single["deep_page"]["p50_ms"] / single["page_1"]["p50_ms"], 2)
    target("deep page p50 <= 3 x page 1 (one client)", ratio, ratio <= 3)
    if "deep_page" in by and "list_large" in by:
        ratio = round(by["deep_page"]["p50_ms"] / by["list_large"]["p50_ms"], 2)
        target("deep page p50 <= 3 x page 1 (under load)", ratio, ratio <= 3)
    if "send_cloud_api_paced" in by:
        row = by["send_cloud_api_paced"]
        # Sustained: the offered rate was sent on schedule (a request more than 5 ms late
        # means the server held every connection) and every send was answered 2xx.
        sustained = (
            row["sent_rps"] >= 0.98 * SEND_RATE
            and row["late"] <= 0.01 * row["requests"]
            and row["non_2xx"] == 0
            and row["socket_errors"] == 0
        )
        target(f"send via 200 ms Cloud API sustains {SEND_RATE} msg/s", row["sent_rps"], sustained)
        target("send via 200 ms Cloud API p99 < 600 ms", row["p99_ms"], row["p99_ms"] < 600)
    for row in replies:
        if row["offered_rps"] == max(AUTOREPLY_RATES):
            target(
                f"auto-reply p99 < 500 ms at {row['offered_rps']:g} msg/s, none lost",
                row["p99_ms"],
                row["p99_ms"] < 500 and row["lost"] == 0,
            )
    if replies:
        depth = replies[-1]["queue_depth_after"]
        target("task queue back to 0 after the auto-replies", depth, depth == 0)
    target(
        "rate limit lets exactly 60 through",
        burst_result["let_through"],
        burst_result["let_through"] == BURST_LIMIT,
    )
    target(
        "matching < 1 ms per message", matching["per_message_us"], matching["per_message_us"] < 1000
    )
    target(
        "no query per canned reply",
        matching["queries_per_message"],
        matching["queries_per_message"] <= 1,
    )
    return out


def write(report: dict, *, chart: bool) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS / f"{stamp}.json"
    text = json.dumps(report, indent=2)
    path.write_text(text)
    (RESULTS / "latest.json").write_text(text)
    print_table(report)
    log(f"wrote {path.relative_to(ROOT)} and bench/results/latest.json")
    if chart:
        try:
            from bench.chart import draw
        except ImportError:
            log("matplotlib is missing (make bench installs it): no chart")
            return
        png = RESULTS / f"{stamp}.png"
        draw(report, png)
        shutil.copyfile(png, RESULTS / "latest.png")
        log(f"wrote {png.relative_to(ROOT)} and bench/results/latest.png")


def print_table(report: dict) -> None:
    print()
    print(f"{'scenario':<58} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'ratio':>6} {'non-2xx':>7}")
    for row in report["scenarios"]:
        print(
            f"{row['label']:<58} {row['rps']:>8.1f} {row['p50_ms']:>8.2f} {row['p99_ms']:>8.2f} "
            f"{row['ratio_to_noop']:>6.2f} {row['non_2xx']:>7}"
        )
    for row in report["scenarios"]:
        if "offered_rps" in row:
            print(
                f"{row['label']}: {row['sent_rps']}/s sent of {row['offered_rps']}/s offered, "
                f"{row['late']} late, {row['socket_errors']} socket errors"
            )
    for row in report.get("autoreply", []):
        print(
            f"{row['label']}: p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms, "
            f"{row['lost']} lost, queue {row['queue_depth_after']} after "
            f"{row['queue_drained_after_s']} s"
        )
    single = report["single_client"]
    print(
        f"\none client: page 1 p50 {single['page_1']['p50_ms']} ms, deep page p50 "
        f"{single['deep_page']['p50_ms']} ms"
    )
    m = report["matching"]
    print(
        f"8. matching against {m['replies']:,} canned replies: {m['per_message_us']} µs per "
        f"message, {m['queries_per_message']} queries per message"
    )
    b = report["rate_limit_burst"]
    print(
        f"rate limit burst: {b['let_through']} of {b['requests']} let through by "
        f"{b['clients']} clients (limit {b['limit']})"
    )
    print(f"worker peak RSS (MiB): {report['worker_peak_rss_mib']}")
    print("\ntargets:")
    for name, result in report["targets"].items():
        print(f"  {'holds' if result['holds'] else 'MISSED':<7} {name}: {result['value']}")
    print()


if __name__ == "__main__":
    main()
