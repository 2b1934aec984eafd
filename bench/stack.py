"""What every scenario stands on: a scratch PostgreSQL database cloned from the run's
migrated template, the Cloud API stand-in, and the service as `make run` serves it
(honcho: gunicorn and the task worker). And the checks a scenario makes of it: the task
queue and the event outbox drained before it measures, the worker found and paused."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import redis

from bench import cpu
from bench.autoanalyze import Autoanalyze
from bench.payloads import APP_SECRET
from devtools.loopback import free_port, reachable, wait_until_listening

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
ADMIN_URL = os.environ.get("BENCH_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = "redis://127.0.0.1:6379/11"  # its own database: the suite uses 14 and 15
DRAIN_SECONDS = 300

# Tasks due or under way, events not yet fanned out, and deliveries due or under way.
# Deferred work (a retry or a periodic task whose time has not come) is not a backlog.
DRAIN_SQL = """
SELECT
  (SELECT count(*) FROM django_tasks_database_dbtaskresult
   WHERE status = 'RUNNING'
      OR (status = 'READY' AND (run_after <= now() OR run_after >= '9999-01-01'))),
  (SELECT count(*) FROM events_emission),
  (SELECT count(*) FROM events_delivery WHERE status = 'pending'
      AND (claimed_until IS NOT NULL OR next_attempt_at IS NULL OR next_attempt_at <= now()))
"""

QUEUED_STATUSES_SQL = "SELECT count(*) FROM inbound_queuedstatuses WHERE error = ''"


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


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


def ensure_wrk() -> None:
    if shutil.which("wrk"):
        return
    log("installing wrk from Debian's packages")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)


# Scratch databases.


def database_url(name: str) -> str:
    return ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


def create_database(name: str, template: str | None = None) -> str:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return database_url(name)


def drop_database(name: str) -> None:
    """Drop it; a failure is told, not raised, so that it hides no error before it."""
    try:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except psycopg.Error as error:
        log(f"could not drop the database {name}: {error}")


@contextlib.contextmanager
def migrated_template(root: Path = ROOT):
    """A database migrated once for the whole run; each scenario's is a copy of it.
    `root`: the tree whose migrations make it (another commit's checkout)."""
    name = f"bench_template_{uuid.uuid4().hex[:8]}"
    url = create_database(name)
    try:
        env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "bench", "LOG_LEVEL": "WARNING"}
        migrate = [PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"]
        subprocess.run(migrate, cwd=root, env=env, check=True)
        yield name
    finally:
        drop_database(name)


def environment(url: str, scratch: Path, **settings: str) -> dict:
    """The service's environment on a scratch database and folder: production's DEBUG
    off, warnings only in the log, no API rate limit but the one an organization sets
    (load comes from one organization); `settings` add to it."""
    return {
        **os.environ,
        "DATABASE_URL": url,
        "DEBUG": "false",
        "SECRET_KEY": "bench-" + uuid.uuid4().hex,
        "VAR_DIR": str(scratch),
        "LOG_LEVEL": "WARNING",
        "API_RATE_LIMIT": "100000000",
        # The sandbox's status webhooks would be work of its own beside what a scenario
        # measures (docs/channel.md); a scenario that wants statuses posts them.
        "SANDBOX_STATUS_DELAYS": "off",
        **settings,
    }


# Processes.


def start_stand_in(
    scratch: Path, delay: float = 0.2, status_url: str = ""
) -> tuple[subprocess.Popen, int, Path]:
    """bench/cloud_stub.py on a free port, in its own process group, answering each send
    after `delay` seconds and writing down when it arrived in `scratch`/arrivals.tsv;
    with `status_url`, posting each send's `sent` and `delivered` webhooks there."""
    port = free_port()
    arrivals = scratch / "arrivals.tsv"
    arrivals.touch()
    statuses = {"STUB_STATUS_URL": status_url, "STUB_APP_SECRET": APP_SECRET} if status_url else {}
    process = subprocess.Popen(
        [PYTHON, "-m", "bench.cloud_stub", str(port), str(delay), str(arrivals)],
        cwd=ROOT,
        env={**os.environ, **statuses},
        start_new_session=True,
    )
    if not wait_until_listening(port, timeout=120, process=process):
        stop_process_groups([process])
        raise RuntimeError(f"the Cloud API stand-in did not start on port {port}")
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


def descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # pid (comm) state ppid ...: comm may hold spaces, so split after ")".
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def peak_rss_kib(pid: int) -> int:
    """VmHWM: the most resident memory the process ever had."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for {pid}")


@contextlib.contextmanager
def stopped(pids: list[int], database_url: str = ""):
    """The processes `pids` stopped (SIGSTOP) for the block, continued after it.

    With `database_url`, only at a moment when none of the database's connections is
    inside a transaction: a worker stopped inside one would hold PostgreSQL's oldest
    snapshot for the whole block, so that no dead version of a row updated by every
    request (the contacts' count) could be pruned meanwhile."""
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


def transactions_open(url: str) -> int:
    """How many of the database's other connections are inside a transaction."""
    with psycopg.connect(url, autocommit=True) as conn:
        query = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
        )
        return conn.execute(query).fetchone()[0]


class Stack:
    """One scenario's service: a copy of the template database, seeded by `seed` (Python
    run by `manage.py shell`, whose last printed line is kept as `seeded`), the stand-in
    (or `graph_url`), and `make run` with `workers` x `threads`. With `post_statuses`, the
    stand-in posts each send's statuses to the webhook of the organization whose "uuid"
    the seed printed. A context manager: the processes are stopped and the database
    dropped at its end."""

    def __init__(
        self,
        template: str,
        *,
        seed: str = "",
        seed_module: tuple[str, ...] = (),
        use_redis: bool = True,
        stand_in: bool = True,
        post_statuses: bool = False,
        graph_url: str = "",
        workers: int = 2,
        threads: int = 32,
        root: Path = ROOT,
        redis_url: str = REDIS_URL,
        **settings: str,
    ) -> None:
        self.root, self.redis_url = root, redis_url
        self.template, self.seed, self.seed_module = template, seed, seed_module
        self.use_redis, self.stand_in, self.graph_url = use_redis, stand_in, graph_url
        self.post_statuses = post_statuses
        self.workers, self.threads, self.settings = workers, threads, settings
        self.processes: list[subprocess.Popen] = []
        self.database = f"bench_{uuid.uuid4().hex[:10]}"
        self.scratch = Path(tempfile.mkdtemp(prefix="bench-"))
        self.arrivals = self.scratch / "arrivals.tsv"
        self.seeded = ""

    def __enter__(self) -> "Stack":
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def start(self) -> None:
        self.url = create_database(self.database, self.template)
        cache = self.redis_url if self.use_redis and reachable(6379) else ""
        self.env = environment(self.url, self.scratch, REDIS_URL=cache, **self.settings)
        if cache:
            redis.Redis.from_url(cache).flushdb()
        if self.seed:
            self.seeded = self.run([PYTHON, "manage.py", "shell", "-c", self.seed])
        if self.seed_module:
            self.seeded = self.run([PYTHON, "-m", *self.seed_module])
        self.vacuum()
        self.autoanalyze = Autoanalyze(self.url)
        self.autoanalyze.start()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        if self.stand_in:
            status_url = ""
            if self.post_statuses:
                status_url = f"{self.base}/webhooks/whatsapp/{json.loads(self.seeded)['uuid']}"
            process, port, self.arrivals = start_stand_in(self.scratch, status_url=status_url)
            self.processes.append(process)
            self.graph_url = f"http://127.0.0.1:{port}/v21.0"
        if self.graph_url:
            self.env["WHATSAPP_GRAPH_URL"] = self.graph_url
        # `-o install`: the tree's .venv is taken as it is (another tree's, shared).
        command = ["make", "-s", "-o", "install", "run", f"PORT={self.port}"]
        command += [f"WORKERS={self.workers}", f"THREADS={self.threads}"]
        self.log = (self.scratch / "server.log").open("w")
        self.server = subprocess.Popen(
            command, cwd=self.root, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self.processes.append(self.server)
        if not wait_until_listening(self.port, timeout=120, process=self.server):
            raise RuntimeError(f"make run did not start:\n{self.server_log()}")
        self.wait_for_worker()

    def close(self) -> None:
        if hasattr(self, "autoanalyze"):
            self.autoanalyze.stop()
        stop_process_groups(self.processes)
        if hasattr(self, "url"):
            drop_database(self.database)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def run(self, command: list[str]) -> str:
        """A command in the stack's environment; the last line it printed."""
        done = subprocess.run(command, cwd=self.root, env=self.env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(command[:4])} failed:\n{done.stderr[-3000:]}")
        return (done.stdout.strip().splitlines() or [""])[-1]

    def server_log(self) -> str:
        return (self.scratch / "server.log").read_text()[-3000:]

    def vacuum(self) -> None:
        # Fresh rows are not yet marked all-visible and have no statistics; autovacuum
        # would have done this in time. The checkpoint writes the seed's pages now, not
        # spread over the first minutes of the measurements.
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            conn.execute("CHECKPOINT")

    def analyze(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("ANALYZE")

    def sql(self, statement: str, params: list | None = None) -> tuple:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute(statement, params).fetchone()

    def cpu_snapshot(self) -> dict[int, tuple[str, float]]:
        """bench/cpu.py's snapshot, this stack's processes and database the service's."""
        return cpu.snapshot(service=descendants(self.server.pid), database=self.database)

    def worker_pids(self) -> list[int]:
        """The task worker among the server's descendants (honcho's `worker:` process)."""
        return [pid for pid in descendants(self.server.pid) if "db_worker" in command_line(pid)]

    def web_pids(self) -> list[int]:
        """The gunicorn workers: the children of the gunicorn master."""
        gunicorn = {pid for pid in descendants(self.server.pid) if "gunicorn" in command_line(pid)}
        return [pid for pid in gunicorn if descendants(pid).isdisjoint(gunicorn)]

    def wait_for_worker(self, timeout: float = 60) -> None:
        """Until the task worker has written its first heartbeat: it takes tasks then."""
        deadline = time.monotonic() + timeout
        while not self.sql("SELECT count(*) FROM base_workerheartbeat")[0]:
            if time.monotonic() > deadline or self.server.poll() is not None:
                raise RuntimeError(f"the task worker did not start:\n{self.server_log()}")
            time.sleep(0.2)

    def backlog(self) -> dict[str, int]:
        tasks, emissions, deliveries = self.sql(DRAIN_SQL)
        left = {"tasks": tasks, "events": emissions, "deliveries": deliveries}
        # Statuses queued for the workers (WHATSAPP_STATUSES_QUEUED), on a tree that has them.
        if self.sql("SELECT to_regclass('inbound_queuedstatuses') IS NOT NULL")[0]:
            left["statuses"] = self.sql(QUEUED_STATUSES_SQL)[0]
        return left

    def wait_drained(self, before: str, timeout: float = DRAIN_SECONDS) -> float:
        """Wait until no task, event or delivery is due or under way, so that `before`
        (the next measurement) does not measure what came before it; the seconds it took.
        Fails, naming the backlog, when `timeout` seconds were not enough."""
        started = time.monotonic()
        while any((left := self.backlog()).values()):
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"not drained within {timeout:g} s {before}: {left}")
            time.sleep(0.25)
        return round(time.monotonic() - started, 1)
