"""The connection budget: `check --deploy` adds up the connections the configured web and
worker processes hold and warns when PostgreSQL's max_connections (less its reserved
slots) cannot take them; docs/operations.md, the Makefile and the settings give the
same formula. The server's limits are given to the check here, never read from this
machine's server, whose max_connections may be anything."""

from pathlib import Path

import pytest
from django.db import connection

from messaging_project.worker import checks
from messaging_project.worker.checks import Budget, budget_warnings, connection_budget

ROOT = Path(__file__).resolve().parents[2]
FORMULA = "WEB_SERVERS x WORKERS x THREADS + WORKER_PROCESSES x (TASK_WORKER_THREADS + 4)"
# PostgreSQL's defaults: max_connections 100, 3 slots reserved for superusers.
DEFAULT_SERVER = {"max_connections": 100, "superuser_reserved_connections": 3}


def test_the_default_single_machine_fits_the_default_server(settings):
    budget = Budget.from_settings()
    assert (budget.web, budget.workers, budget.total) == (64, 20, 84)
    assert budget_warnings(budget, DEFAULT_SERVER) == []


def test_the_docs_two_worker_example_warns(settings):
    settings.WORKER_PROCESSES = 2
    [warning] = budget_warnings(Budget.from_settings(), DEFAULT_SERVER)
    assert warning.id == "worker.W001"
    assert "need 104 database connections" in warning.msg
    assert "web 1 x 2 x 32 = 64, workers 2 x (16 + 4) = 40" in warning.msg
    assert "PostgreSQL allows 97 (max_connections 100 less 3 reserved)" in warning.msg


def test_every_setting_counts(settings):
    fits = {"max_connections": 200, "superuser_reserved_connections": 3}
    settings.WEB_SERVERS = 2
    assert budget_warnings(Budget.from_settings(), fits) == []  # 128 + 20
    settings.WEB_THREADS = 48
    assert budget_warnings(Budget.from_settings(), fits)  # 192 + 20
    settings.WEB_THREADS, settings.TASK_WORKER_THREADS = 32, 70
    assert budget_warnings(Budget.from_settings(), fits)  # 128 + 74
    # PostgreSQL 16's reserved_connections are taken off too.
    settings.TASK_WORKER_THREADS = 16
    assert budget_warnings(Budget.from_settings(), {**fits, "reserved_connections": 60})


def test_a_worker_holds_four_connections_beside_its_threads():
    # Its round, its LISTEN, the event deliveries' queue and the queued statuses': the
    # "+ 4" of the formula.
    assert checks.worker_extra_connections() == 4


@pytest.mark.parametrize(
    "path", ["docs/operations.md", "Makefile", "messaging_project/settings.py"]
)
def test_the_docs_the_makefile_and_the_settings_give_the_same_formula(path):
    text = (ROOT / path).read_text()
    assert FORMULA in text
    assert "1 x 2 x 32 + 1 x (16 + 4) = 84" in text


@pytest.mark.django_db
def test_the_deploy_check_reads_the_servers_limits_and_warns(settings, monkeypatch):
    if connection.vendor != "postgresql":
        assert connection_budget(None) == []  # SQLite: one machine, no limit to check
        return
    limits = checks.connection_limits(connection)  # the real query, on this server
    assert limits["max_connections"] > 0 and "superuser_reserved_connections" in limits
    settings.DATABASE_POOLING = "none"  # straight to PostgreSQL, whatever this run uses
    monkeypatch.setattr(checks, "connection_limits", lambda connection: DEFAULT_SERVER)
    assert connection_budget(None) == []
    settings.WORKER_PROCESSES = 2
    assert [message.id for message in connection_budget(None)] == ["worker.W001"]
    # Behind a transaction pooler the clients share the pool: nothing to add up here.
    settings.DATABASE_POOLING = "transaction"
    assert connection_budget(None) == []


@pytest.mark.django_db
def test_a_database_that_cannot_be_read_is_a_warning_not_a_crash(settings, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("the check reads PostgreSQL's settings")
    settings.DATABASE_POOLING = "none"
    from django.db import OperationalError

    def unreachable(connection):
        raise OperationalError("connection refused")

    monkeypatch.setattr(checks, "connection_limits", unreachable)
    [warning] = connection_budget(None)
    assert warning.id == "worker.W002" and "connection refused" in warning.msg
