"""The `instructions` scenario (run only when named: `make bench ONLY=instructions`): the
inbound webhook's Python cost in instructions, with and without event endpoints.

Rounds of the events scenario's throughput differ by up to 30% on a shared machine,
more than a change to the emission moves them. Instructions counted by valgrind's
callgrind do not move: the same code on the same data counts the same to 0.1%, whatever
the rest of the machine is doing. This counts the Django process alone (PostgreSQL is
not counted), through Django's test client (no WSGI server), one webhook at a time, each
from a new sender, with the events scenario's two endpoints subscribed to
message.received, on or off.

Three children run under callgrind, two at a time: none posted (the start-up, subtracted
from the others), endpoints off, and endpoints on. Each gets its own copy of one seeded
database. About 3 minutes for 100 webhooks a mode.
"""

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg

from bench.events import SEED
from bench.payloads import signed_messages
from bench.stack import PYTHON, ROOT, create_database, drop_database, environment

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
        PYTHON, "-m", "bench.instructions", organization, "--webhooks", str(webhooks),
    ] + (["--active"] if active else [])  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind child failed:\n{done.stderr[-2000:]}")
    return int(found[1])


def run(template: str, quick: bool) -> dict:
    if shutil.which("valgrind") is None:
        raise RuntimeError("valgrind is needed: apt-get install valgrind")
    webhooks = 10 if quick else 100
    scratch = Path(tempfile.mkdtemp(prefix="bench-instructions-"))
    seeded = f"bench_{uuid.uuid4().hex[:10]}"
    copies = [f"{seeded}_{n}" for n in range(3)]
    try:
        env = environment(create_database(seeded, template), scratch, REDIS_URL="")
        env.update(PYTHONHASHSEED="0", DJANGO_SETTINGS_MODULE="messaging_project.settings")
        hook = "http://127.0.0.1:9/hook"  # never posted to: no worker runs
        seed = SEED.format(url=hook, down_url=hook)
        shell = [PYTHON, "manage.py", "shell", "-c", seed]
        done = subprocess.run(shell, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        organization = done.stdout.split()[-2]
        modes = {"start-up": (False, 0), "without": (False, webhooks), "with": (True, webhooks)}
        jobs = {}
        with ThreadPoolExecutor(max_workers=2) as pool:
            for (name, (active, count)), database in zip(modes.items(), copies, strict=True):
                child_env = {**env, "DATABASE_URL": create_database(database, seeded)}
                jobs[name] = pool.submit(counted, child_env, organization, active, count)
        total = {name: job.result() for name, job in jobs.items()}
    finally:
        for name in (*copies, seeded):
            drop_database(name)
        shutil.rmtree(scratch, ignore_errors=True)
    without = (total["without"] - total["start-up"]) / webhooks
    with_ = (total["with"] - total["start-up"]) / webhooks
    return {
        "targets": {},
        "webhooks": webhooks,
        "per_webhook_without_endpoints": round(without),
        "per_webhook_with_two_endpoints": round(with_),
        "emission_per_webhook": round(with_ - without),
        "emission_share": round((with_ - without) / without, 4),
    }


if __name__ == "__main__":  # a child, under callgrind
    parser = argparse.ArgumentParser()
    parser.add_argument("organization")
    parser.add_argument("--active", action="store_true")
    parser.add_argument("--webhooks", type=int)
    options = parser.parse_args()
    child(options.organization, options.active, options.webhooks)
