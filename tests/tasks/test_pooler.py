"""Behind PgBouncer in transaction pooling mode (devtools/pgbouncer.py starts a real one):
queries pool by transaction, and a worker whose DATABASE_URL is the pooler still takes
up a new task at once when it LISTENs on DATABASE_DIRECT_URL, and within its poll
interval when only the pooler can be reached."""

import importlib
import time

import psycopg
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from devtools.loopback import free_port
from devtools.pgbouncer import (
    SHIPPED,
    PgBouncer,
    auth_line,
    config,
    executable,
    with_database,
)
from messaging_project.worker.models import WorkerHeartbeat
from messaging_project.worker.runner import CHANNEL, Listener
from tests.tasks import jobs
from tests.tasks.processes import environment, start_worker, stop, wait_until

postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PgBouncer stands in front of PostgreSQL"
)
needs_pgbouncer = pytest.mark.skipif(
    executable() is None, reason="pgbouncer is not installed (apt-get install pgbouncer)"
)
# All of them in CI's run through PgBouncer too.
pytestmark = pytest.mark.pooled


def test_the_shipped_configuration_runs_with_only_this_machines_paths_replaced(tmp_path):
    shipped = SHIPPED.read_text()
    ini = config(
        server_host="127.0.0.1",
        server_port=5432,
        port=6543,
        directory=tmp_path,
        admin_user="postgres",
        pool_size=5,
        run_as="postgres",
    )
    # What production runs, as shipped: pooling, authentication, limits.
    for kept in ("pool_mode = transaction", "auth_type = scram-sha-256"):
        assert kept in shipped and kept in ini
    assert "listen_addr = 127.0.0.1" in ini and "listen_port = 6543" in ini
    assert f"pidfile = {tmp_path}/pgbouncer.pid" in ini
    assert f"auth_file = {tmp_path}/users.txt" in ini
    assert "* = host=127.0.0.1 port=5432" in ini
    assert "messaging = host" not in ini  # the shipped database entry, replaced
    assert "default_pool_size = 5" in ini and "user = postgres" in ini
    assert "unix_socket_dir = \n" in ini  # no socket file to collide with another's
    assert auth_line('we"ird', "pa ss") == '"we""ird" "pa ss"\n'


def test_the_shipped_configuration_has_no_comment_after_a_value():
    # PgBouncer reads `max_client_conn = 1000   ; ...` as the value "1000   ; ...".
    for line in SHIPPED.read_text().splitlines():
        value = line.partition("=")[2]
        assert ";" not in value and "#" not in value, line


@pytest.fixture
def reloaded_settings(monkeypatch):
    """The settings module read again from the environment the test sets."""
    import messaging_project.settings as module

    def reload(**env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return importlib.reload(module)

    yield reload
    monkeypatch.undo()
    importlib.reload(module)


def test_transaction_pooling_turns_off_what_outlives_a_transaction(reloaded_settings):
    module = reloaded_settings(
        DATABASE_URL="postgres://app@127.0.0.1:6432/messaging",
        DATABASE_POOLING="transaction",
        DATABASE_DIRECT_URL="postgres://app@10.0.0.5:5432/messaging",
    )
    database = module.DATABASES["default"]
    assert database["DISABLE_SERVER_SIDE_CURSORS"] is True
    assert database["OPTIONS"]["prepare_threshold"] is None
    assert (module.DATABASE_DIRECT["HOST"], module.DATABASE_DIRECT["PORT"]) == ("10.0.0.5", 5432)
    module = reloaded_settings(DATABASE_POOLING="none")
    assert module.DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] is False


@pytest.mark.parametrize(
    "env, message",
    [
        ({"DATABASE_POOLING": "statement"}, "DATABASE_POOLING must be none, session or"),
        ({"DATABASE_DIRECT_URL": "sqlite:///x.db"}, "DATABASE_DIRECT_URL must be a postgres"),
    ],
)
def test_a_wrong_pooling_setting_stops_the_service(reloaded_settings, env, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        reloaded_settings(DATABASE_URL="postgres://app@127.0.0.1:6432/messaging", **env)


def server_url() -> str:
    """PostgreSQL itself (never a pooler the suite may already run behind), naming the
    test database."""
    db = settings.DATABASE_DIRECT or connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    url = f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
    return with_database(url, connection.settings_dict["NAME"])


@pytest.fixture
def pooler():
    with PgBouncer(server_url(), pool_size=2) as running:
        yield running


def backend_pid(url: str) -> int:
    with psycopg.connect(url, autocommit=True, prepare_threshold=None) as client:
        return client.execute("SELECT pg_backend_pid()").fetchone()[0]


@postgresql
@needs_pgbouncer
@pytest.mark.django_db(transaction=True)
def test_clients_of_the_pooler_share_its_server_connections_by_transaction():
    with (
        PgBouncer(server_url(), pool_size=1) as pooler,
        psycopg.connect(pooler.url, autocommit=True, prepare_threshold=None) as held,
    ):
        # A client that stays connected holds no server connection between its
        # transactions: another client's transaction runs on the same one.
        first = held.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert backend_pid(pooler.url) == first
        name = held.execute("SELECT current_database()").fetchone()[0]
    assert name == connection.settings_dict["NAME"]


@postgresql
@pytest.mark.django_db
def test_the_listener_connects_to_the_direct_url_with_the_services_parameters():
    direct = {"NAME": "real", "USER": "owner", "PASSWORD": "", "HOST": "db.internal"}
    params = Listener("default", {**direct, "PORT": 5433, "OPTIONS": {"sslmode": "require"}})
    params = params.connection_params()
    assert (params["dbname"], params["user"], params["host"], params["port"]) == (
        "real",
        "owner",
        "db.internal",
        5433,
    )
    assert "password" not in params  # the direct URL's, not the pooler's
    assert params["sslmode"] == "require" and params["prepare_threshold"] is None
    assert params["connect_timeout"] == Listener.CONNECT_TIMEOUT


def listening_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND query = %s",
            [connection.settings_dict["NAME"], f"LISTEN {CHANNEL}"],
        )
        return cursor.fetchone()[0]


def pickup_seconds(key: int) -> float:
    """Seconds from the enqueue's commit until a worker has run the task."""
    jobs.record_run.enqueue(key)  # autocommit: committed here
    enqueued = time.monotonic()
    wait_until(lambda: any(k == key for k, _, _ in jobs.runs()), seconds=30, what="the run")
    return time.monotonic() - enqueued


def behind_the_pooler(pooler, tmp_path, *, direct: str, interval: float):
    env = environment(
        tmp_path,
        DATABASE_URL=pooler.url,
        DATABASE_POOLING="transaction",
        DATABASE_DIRECT_URL=direct,
    )
    log = tmp_path / "worker.log"
    worker = start_worker(env, log, "--threads", "2", "--interval", str(interval))
    wait_until(lambda: WorkerHeartbeat.objects.exists(), what="the worker")
    return worker, log


@postgresql
@needs_pgbouncer
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_behind_the_pooler_listens_directly_and_starts_a_task_within_a_second(
    pooler, runs_table, tmp_path
):
    # A poll every 30 s: only the notification can bring the task within a second.
    worker, log = behind_the_pooler(pooler, tmp_path, direct=server_url(), interval=30)
    try:
        wait_until(lambda: listening_backends() == 1, what="the worker's LISTEN")
        pickups = [pickup_seconds(key) for key in range(3)]
    finally:
        code = stop(worker)
    assert code == 0, log.read_text()[-3000:]
    assert max(pickups) < 1.0, pickups


@postgresql
@needs_pgbouncer
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("direct", ["unreachable", "unset"])
def test_a_worker_that_reaches_only_the_pooler_polls_within_its_interval(
    pooler, runs_table, tmp_path, direct
):
    closed = f"postgres://postgres@127.0.0.1:{free_port()}/{connection.settings_dict['NAME']}"
    url = closed if direct == "unreachable" else ""
    worker, log = behind_the_pooler(pooler, tmp_path, direct=url, interval=2)
    try:
        pickups = [pickup_seconds(key) for key in range(3)]
        # No LISTEN anywhere: none on PostgreSQL itself, none left on a pooled connection.
        assert listening_backends() == 0
    finally:
        code = stop(worker)
    output = log.read_text()
    assert code == 0, output[-3000:]
    assert max(pickups) < 2 + 1.0, pickups  # the interval, and a claim's worth of slack
    if direct == "unreachable":
        assert "Cannot LISTEN for tasks on 127.0.0.1" in output, output[-3000:]
    else:
        assert "No DATABASE_DIRECT_URL behind the pooler: polling for tasks" in output
