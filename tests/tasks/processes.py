"""Real processes for the crash tests: `manage.py db_worker` against the test database,
and a web process that dies the moment a webhook commits (crash_after_commit.py)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

from messaging_project.core import encryption

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The test database, as other processes reach it: a `transaction=True` test's
    writes are committed, so they see them."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def direct_url() -> str:
    """DATABASE_DIRECT_URL for other processes (behind a pooler): PostgreSQL itself,
    naming the test database; empty when there is none."""
    direct = settings.DATABASE_DIRECT
    if direct is None:
        return ""
    password = f":{direct['PASSWORD']}" if direct["PASSWORD"] else ""
    return (
        f"postgres://{direct['USER']}{password}@{direct['HOST']}:{direct['PORT']}/{direct['NAME']}"
    )


def environment(tmp_path: Path, **extra: str) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DATABASE_DIRECT_URL": direct_url(),
        "VAR_DIR": str(tmp_path),
        "SECRET_KEY": "crash-tests",
        "DEBUG": "false",
        "REDIS_URL": "",
        "LOG_LEVEL": "INFO",
        # The secrets this process stored must decrypt there: the same keys.
        "FIELD_ENCRYPTION_KEYS": ",".join(
            encryption.configured_keys() or [encryption.development_key()]
        ),
        **extra,
    }


def start_worker(env: dict, log: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-startup-delay", *args],
        cwd=ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
    )


def stop(process: subprocess.Popen, seconds: float = 30) -> int:
    """SIGTERM, as honcho or systemd stop it; its exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    return process.wait(timeout=seconds)


def wait_until(condition, seconds: float = 60, what: str = "the condition") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
