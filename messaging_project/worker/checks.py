"""`check --deploy`: the connection budget. Every gunicorn thread and every worker thread
holds a PostgreSQL connection, and each worker process a few more; the deployment the
settings describe (WEB_SERVERS, WORKERS, THREADS, WORKER_PROCESSES, TASK_WORKER_THREADS)
must fit in the server's max_connections, less the slots it reserves, or the last
process to connect fails (docs/operations.md, "Connections")."""

from dataclasses import dataclass

from django.conf import settings
from django.core import checks
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from messaging_project.core.queries import connection_limits
from messaging_project.worker.queues import QUEUES

# Beside its task threads, a worker process holds the supervisor's connection (its
# heartbeat round) and its LISTEN connection; each registered queue's thread holds one.
WORKER_OWN_CONNECTIONS = 2


def worker_extra_connections() -> int:
    """Connections a worker process holds beside its TASK_WORKER_THREADS (4 with the
    event deliveries' and the queued statuses' queues)."""
    return WORKER_OWN_CONNECTIONS + len(QUEUES)


@dataclass(frozen=True)
class Budget:
    web_servers: int
    web_workers: int
    web_threads: int
    worker_processes: int
    worker_threads: int
    worker_extra: int

    @classmethod
    def from_settings(cls) -> "Budget":
        return cls(
            web_servers=settings.WEB_SERVERS,
            web_workers=settings.WEB_WORKERS,
            web_threads=settings.WEB_THREADS,
            worker_processes=settings.WORKER_PROCESSES,
            worker_threads=settings.TASK_WORKER_THREADS,
            worker_extra=worker_extra_connections(),
        )

    @property
    def web(self) -> int:
        return self.web_servers * self.web_workers * self.web_threads

    @property
    def workers(self) -> int:
        return self.worker_processes * (self.worker_threads + self.worker_extra)

    @property
    def total(self) -> int:
        return self.web + self.workers

    def explained(self) -> str:
        return (
            f"web {self.web_servers} x {self.web_workers} x {self.web_threads} = {self.web}, "
            f"workers {self.worker_processes} x ({self.worker_threads} + {self.worker_extra}) "
            f"= {self.workers}"
        )


def budget_warnings(budget: Budget, limits: dict[str, int]) -> list[checks.CheckMessage]:
    """A warning when `budget` needs more connections than `limits` (pg_settings'
    max_connections and reserved slots) leave to the service."""
    reserved = limits.get("superuser_reserved_connections", 0) + limits.get(
        "reserved_connections", 0
    )
    available = limits["max_connections"] - reserved
    if budget.total <= available:
        return []
    return [
        checks.Warning(
            f"The processes configured need {budget.total} database connections "
            f"({budget.explained()}), but PostgreSQL allows {available} "
            f"(max_connections {limits['max_connections']} less {reserved} reserved).",
            hint="Lower THREADS or TASK_WORKER_THREADS, raise max_connections, or put "
            "PgBouncer in front (docs/operations.md, Connections). WEB_SERVERS and "
            "WORKER_PROCESSES must say how many run.",
            id="worker.W001",
        )
    ]


@checks.register("database_connections", deploy=True)
def connection_budget(app_configs, **kwargs):
    connection = connections[DEFAULT_DB_ALIAS]
    # SQLite serves one machine; behind a transaction pooler the clients share the
    # pool's connections, whose size is the pooler's setting.
    if connection.vendor != "postgresql" or settings.DATABASE_POOLING == "transaction":
        return []
    try:
        limits = connection_limits(connection)
    except DatabaseError as error:
        return [
            checks.Warning(
                f"The connection budget could not be checked: {str(error).strip()}",
                hint="Run the check where DATABASE_URL reaches the database.",
                id="worker.W002",
            )
        ]
    return budget_warnings(Budget.from_settings(), limits)
