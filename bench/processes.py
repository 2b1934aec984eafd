"""The processes a bench scenario starts and stops: the environment of `make run`'s two
processes on a scratch database, its migration and seed, the Cloud API stand-in, the
task worker found and paused (so that the web process is measured alone), and every
process group (honcho, gunicorn, the worker, the stand-in) stopped at the end."""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from devtools.loopback import free_port, wait_until_listening

ROOT = Path(__file__).resolve().parent.parent


def scenario_environment(database_url: str, scratch: Path, **settings: str) -> dict:
    """The environment of the service under a scenario: the scratch database and folder,
    production's DEBUG off, warnings only in the log; `settings` add to it."""
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "false",
        "SECRET_KEY": "bench-" + uuid.uuid4().hex,
        "VAR_DIR": str(scratch),
        "LOG_LEVEL": "WARNING",
        **settings,
    }


def migrate_and_seed(root: Path, env: dict, seed: str) -> str:
    """Migrate the scratch database and run `seed` (Python, in `manage.py shell`); what
    it printed."""
    python = [sys.executable, "manage.py"]
    subprocess.run([*python, "migrate", "--noinput", "-v", "0"], cwd=root, env=env, check=True)
    seeded = subprocess.run(
        [*python, "shell", "-c", seed], cwd=root, env=env, check=True, capture_output=True
    )
    return seeded.stdout.decode()


def start_stand_in(scratch: Path, delay: float = 0.2) -> tuple[subprocess.Popen, int, Path]:
    """bench/cloud_stub.py on a free port, in its own process group, answering each send
    after `delay` seconds and writing down when it arrived in `scratch`/arrivals.tsv.
    The process, its port and the arrivals file."""
    port = free_port()
    arrivals = scratch / "arrivals.tsv"
    arrivals.touch()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.cloud_stub", str(port), str(delay), str(arrivals)],
        cwd=ROOT,
        start_new_session=True,
    )
    if not wait_until_listening(port, timeout=120, process=process):
        stop_process_groups([process])
        raise SystemExit(f"the Cloud API stand-in did not start on port {port}")
    return process, port, arrivals


def stop_process_groups(processes: list[subprocess.Popen], timeout: float = 30) -> None:
    """SIGTERM each process's group, the last started first; SIGKILL a group that is
    still there after `timeout` seconds. Groups already gone are skipped."""
    for process in reversed(processes):
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=timeout)
        except ProcessLookupError:
            continue
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def worker_pids(server: subprocess.Popen) -> list[int]:
    """The task worker among the server's descendants (honcho's `worker:` process)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # pid (comm) state ppid ...: comm may hold spaces, so split after ")".
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    descendants, frontier = set(), {server.pid}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - descendants
        descendants |= frontier
    found = []
    for pid in descendants:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"db_worker" in command:
            found.append(pid)
    return found


@contextlib.contextmanager
def stopped(pids: list[int], database_url: str = ""):
    """The processes `pids` stopped (SIGSTOP) for the block, continued after it.

    With `database_url`, only at a moment when none of the database's connections is
    inside a transaction (the block starts with nothing else running): a worker stopped
    inside one would hold PostgreSQL's oldest snapshot for the whole block, so that no
    dead version of a row updated by every request (the contacts' count) could be
    pruned meanwhile."""
    for attempt in range(100):
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        if not pids or not database_url or not transactions_open(database_url):
            break
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.05 * (attempt + 1))
    else:
        raise RuntimeError("the worker was inside a transaction each time it was stopped")
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def transactions_open(database_url: str) -> int:
    """How many of the database's other connections are inside a transaction."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        query = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
        )
        return conn.execute(query).fetchone()[0]
