"""Taking the next ready task: each task is taken by one worker thread, however many
workers run on however many machines."""

from django.db import OperationalError, connections
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from messaging_project.core import rows
from messaging_project.worker.queries import CLAIM


def ready_tasks(backend_name: str = "default", queue_names=("default",), excluded=()):
    tasks = DBTaskResult.objects.ready().filter(backend_name=backend_name)
    if "*" not in queue_names:
        tasks = tasks.filter(queue_name__in=list(queue_names))
    if excluded:
        tasks = tasks.exclude(queue_name__in=list(excluded))
    return tasks


def claim_next(tasks, worker_id: str) -> DBTaskResult | None:
    """django_tasks_db's claim (lock, then mark, in one transaction) of the next of
    `tasks`; None when there is none. PostgreSQL claims in one statement (claim_ready)."""
    try:
        with exclusive_transaction(tasks.db):
            task_result = tasks.get_locked()
            if task_result is not None:
                task_result.claim(worker_id)
            return task_result
    except OperationalError as error:
        if is_locked_database_exception(error):  # SQLite: another writer; look again later
            return None
        raise


def claim_ready(
    worker_id: str,
    *,
    backend_name: str = "default",
    queue_names=("default",),
    excluded=(),
    task_id: str | None = None,
    using: str = "default",
) -> DBTaskResult | None:
    """On PostgreSQL: claim the next of ready_tasks(backend_name, queue_names, excluded)
    (only `task_id`, when given) for `worker_id`; None when none is ready."""
    connection = connections[using]
    now = timezone.now()
    only, params = "", []
    if "*" not in queue_names:
        only += " AND queue_name = ANY(%s)"
        params.append(list(queue_names))
    if excluded:
        only += " AND NOT queue_name = ANY(%s)"
        params.append(list(excluded))
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
