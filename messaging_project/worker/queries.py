"""The worker's hand-written SQL: the claim of the next ready task on PostgreSQL. Each
statement says what earns it its place beside the ORM; every one runs on PostgreSQL in
the suite (tests/tasks/)."""

from django.db import connections
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max

from messaging_project.core import rows

# django_tasks_db's claim on PostgreSQL, as one UPDATE ... RETURNING: the first ready
# task in its order (the ready index's), locked with SKIP LOCKED, marked RUNNING with the
# worker appended to worker_ids. One round trip instead of four, for every task and every
# look at an empty queue.
# Earns 42% of the worker's CPU per auto-reply task (124% on a trivial task) over
# django_tasks_db's ORM claim, measured in-process on PostgreSQL.
CLAIM = """
    UPDATE {table} SET status = %s, started_at = %s,
        worker_ids = worker_ids || jsonb_build_array(%s::text)
    WHERE id = (
        SELECT id FROM {table}
        WHERE status = %s AND (run_after = %s OR run_after <= %s) AND backend_name = %s{only}
        ORDER BY priority DESC, run_after ASC, enqueued_at ASC
        LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING {columns}
"""


def claim_ready(
    worker_id: str,
    *,
    backend_name: str = "default",
    queue_names=("default",),
    excluded=(),
    task_id: str | None = None,
    bulk: bool = True,
    using: str = "default",
) -> DBTaskResult | None:
    """On PostgreSQL: claim the next of ready_tasks(backend_name, queue_names, excluded)
    (only `task_id`, when given; no bulk task, of a negative priority, unless `bulk`) for
    `worker_id`; None when none is ready."""
    connection = connections[using]
    now = timezone.now()
    only = ""
    params: list[list[str] | str] = []
    if "*" not in queue_names:
        only += " AND queue_name = ANY(%s)"
        params.append(list(queue_names))
    if excluded:
        only += " AND NOT queue_name = ANY(%s)"
        params.append(list(excluded))
    if not bulk:
        only += " AND priority >= 0"
    if task_id is not None:
        only += " AND id = %s"
        params.append(task_id)
    table = connection.ops.quote_name(DBTaskResult._meta.db_table)
    sql = CLAIM.format(table=table, only=only, columns=rows.columns(DBTaskResult, table))
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                str(TaskResultStatus.RUNNING),
                now,
                worker_id,
                str(TaskResultStatus.READY),
                get_date_max(),
                now,
                backend_name,
                *params,
            ],
        )
        row = cursor.fetchone()
    return None if row is None else rows.instance(DBTaskResult, connection, row)
