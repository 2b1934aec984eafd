"""Tasks that exist for the tests: each run leaves a row in `test_task_runs`, so a test
can count how many times each task ran, and in which process."""

import os
import threading

from django.db import connection
from django_tasks import task

RUNS_TABLE = "test_task_runs"


def create_runs_table() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {RUNS_TABLE}")
        cursor.execute(
            f"CREATE TABLE {RUNS_TABLE} (run_key integer NOT NULL, pid integer NOT NULL, "
            "thread varchar(100) NOT NULL)"
        )


def drop_runs_table() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {RUNS_TABLE}")


def runs() -> list[tuple[int, int, str]]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT run_key, pid, thread FROM {RUNS_TABLE} ORDER BY run_key")
        return list(cursor.fetchall())


@task()
def record_run(key: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {RUNS_TABLE} (run_key, pid, thread) VALUES (%s, %s, %s)",
            [key, os.getpid(), threading.current_thread().name],
        )
    return key


@task()
def always_fails() -> None:
    raise RuntimeError("This task always fails.")


@task()
def lose_connection_once(key: int) -> int:
    """Its first run ends its own database connection, as a database restart would."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {RUNS_TABLE} WHERE run_key = %s", [key])
        first = cursor.fetchone()[0] == 0
    record_run.call(key)
    if first:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
    return key
