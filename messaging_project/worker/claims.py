"""Taking the next ready task: each task is taken by one worker thread, however many
workers run on however many machines."""

from django.db import OperationalError
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception


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
