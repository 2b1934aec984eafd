"""The rate limit is exact across gunicorn workers: 8 clients hammering one
organization get exactly the limit through, on each shared cache we support."""

import os
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from devtools.loopback import free_port, reachable, wait_until_listening

pytestmark = pytest.mark.slow  # a gunicorn per test

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60


def manage(env, *args) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""


def start_gunicorn(env: dict, port: int, *options: str) -> subprocess.Popen:
    """The service under gunicorn on 127.0.0.1:`port`, with the given environment and
    options; the caller waits for it to listen and stops it."""
    return subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "messaging_project.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--no-control-socket",
            *options,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.fixture
def postgres_database():
    import psycopg

    name = f"ratelimit_{uuid.uuid4().hex[:8]}"
    admin = "postgresql://postgres@127.0.0.1:5432/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"postgres://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


BACKENDS = [
    pytest.param("sqlite", id="sqlite-database-cache"),
    pytest.param(
        "postgres",
        id="postgres-database-cache",
        marks=pytest.mark.skipif(not reachable(5432), reason="no PostgreSQL on 127.0.0.1:5432"),
    ),
    pytest.param(
        "redis",
        id="sqlite-redis-cache",
        marks=pytest.mark.skipif(not reachable(6379), reason="no Redis on 127.0.0.1:6379"),
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_exactly_the_limit_gets_through_across_workers(backend, tmp_path, request):
    env = {
        **os.environ,
        "VAR_DIR": str(tmp_path),
        "API_RATE_LIMIT": str(LIMIT),
        "DATABASE_URL": "",
        "REDIS_URL": "",
        "SECRET_KEY": "test",
    }
    if backend == "postgres":
        env["DATABASE_URL"] = request.getfixturevalue("postgres_database")
        manage(env, "migrate", "--noinput")
    else:
        request.getfixturevalue("migrated_database_in")(tmp_path)
    if backend == "redis":
        env["REDIS_URL"] = f"redis://127.0.0.1:6379/{15}"
        import redis

        redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    manage(env, "create_organization", "Burst")
    token = manage(env, "issue_token", "Burst")

    port = free_port()
    server = start_gunicorn(
        env, port, "--workers", "3", "--worker-class", "gthread", "--threads", "4"
    )
    try:
        assert wait_until_listening(port, timeout=30, process=server), "gunicorn did not start"
        # A fixed window: start the burst well inside one minute.
        if time.time() % 60 > 45:
            time.sleep(61 - time.time() % 60)

        def client(_):
            session = requests.Session()
            session.trust_env = False
            headers = {"Authorization": f"Bearer {token}"}
            return [
                session.get(
                    f"http://127.0.0.1:{port}/api/me", headers=headers, timeout=30
                ).status_code
                for _ in range(25)
            ]

        with ThreadPoolExecutor(8) as pool:
            statuses = [status for batch in pool.map(client, range(8)) for status in batch]
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert statuses.count(200) == LIMIT
    assert statuses.count(429) == len(statuses) - LIMIT
