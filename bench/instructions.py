"""The inbound webhook's Python cost in instructions, with and without event endpoints.

Rounds of the throughput bench (bench/events.py) differ by up to 30% on a shared
machine, more than a change to the emission moves them. Instructions counted by
valgrind's callgrind do not move: the same code on the same data counts the same to
0.1%, whatever the rest of the machine is doing. This counts the Django process alone
(PostgreSQL is not counted; its share is in docs/performance.md), through Django's test
client (no WSGI server), one webhook at a time, each from a new sender, with the bench's
two endpoints subscribed to message.received, on or off.

    .venv/bin/python -m bench.instructions                # 100 webhooks a mode, ~3 min
    .venv/bin/python -m bench.instructions --webhooks 50

Three children run under callgrind, two at a time: none posted (the start-up, subtracted
from the others), endpoints off, and endpoints on. Each gets its own copy of one migrated
and seeded database.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.autoreply import APP_SECRET, signed_messages  # noqa: E402
from bench.events import SEED  # noqa: E402
from bench.processes import migrate_and_seed, scenario_environment  # noqa: E402

ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
COLLECTED = re.compile(r"Collected : (\d+)")


def child(organization: str, active: bool, webhooks: int) -> None:
    """Post `webhooks` signed inbound messages through Django's test client."""
    import django

    django.setup()
    from django.test import Client

    client = Client()
    path = f"/webhooks/whatsapp/{organization}"

    def post(messages) -> None:
        for signature, body in messages:
            response = client.post(
                path, data=body, content_type="application/json",
                HTTP_X_HUB_SIGNATURE_256=signature,
            )  # fmt: skip
            if response.status_code != 200:
                raise SystemExit(f"webhook answered {response.status_code}")

    def endpoints(on: bool) -> None:
        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            conn.execute("UPDATE events_endpoint SET is_active = %s", [on])
            conn.execute("ANALYZE")

    endpoints(True)
    post(signed_messages(30, 447_100_000_000))  # warm both modes' code alike
    endpoints(active)
    post(signed_messages(webhooks, 447_200_000_000))


def counted(env: dict, organization: str, active: bool, webhooks: int) -> int:
    """Instructions of one child under callgrind."""
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, "-m", "bench.instructions",
        "--child", organization, "--active" if active else "--inactive",
        "--webhooks", str(webhooks),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind child failed:\n{done.stderr[-2000:]}")
    return int(found[1])


def copy_database(template: str, name: str) -> str:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return f"postgres://postgres@127.0.0.1:5432/{name}"


def drop_databases(*names: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--webhooks", type=int, default=100)
    parser.add_argument("--child")
    parser.add_argument("--active", action="store_true")
    parser.add_argument("--inactive", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.active, args.webhooks)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed: apt-get install valgrind")
    scratch = Path(tempfile.mkdtemp(prefix="bench-instructions-"))
    suffix = os.urandom(4).hex()
    template = f"bench_instr_{suffix}"
    copies = [f"{template}_{n}" for n in range(3)]
    try:
        drop_databases(template)
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{template}"')
        env = scenario_environment(
            f"postgres://postgres@127.0.0.1:5432/{template}", scratch, REDIS_URL=""
        )
        env.update(
            SECRET_KEY="bench-instructions",
            PYTHONHASHSEED="0",
            DJANGO_SETTINGS_MODULE="messaging_project.settings",
        )
        hook = "http://127.0.0.1:9/hook"  # never posted to: no worker runs
        seed = SEED.format(secret=APP_SECRET, url=hook, down_url=hook)
        organization = migrate_and_seed(ROOT, env, seed).split()[-2]
        runs = {"start-up": (False, 0), "without": (False, args.webhooks)}
        runs["with"] = (True, args.webhooks)
        jobs = {}
        with ThreadPoolExecutor(max_workers=2) as pool:
            for (name, (active, webhooks)), database in zip(runs.items(), copies, strict=True):
                child_env = {**env, "DATABASE_URL": copy_database(template, database)}
                jobs[name] = pool.submit(counted, child_env, organization, active, webhooks)
        total = {name: job.result() for name, job in jobs.items()}
        without = (total["without"] - total["start-up"]) / args.webhooks
        with_ = (total["with"] - total["start-up"]) / args.webhooks
        print(
            json.dumps(
                {
                    "name": "webhook_python_instructions",
                    "webhooks": args.webhooks,
                    "per_webhook_without_endpoints": round(without),
                    "per_webhook_with_two_endpoints": round(with_),
                    "emission_per_webhook": round(with_ - without),
                    "emission_share": round((with_ - without) / without, 4),
                },
                indent=2,
            )
        )
    finally:
        drop_databases(template, *copies)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
