"""Enqueueing many runs of one task in a single INSERT (the database backend only).

Django's Tasks API enqueues one task at a time: one INSERT each. An event emitted to
several endpoints owes one delivery task per endpoint, in the transaction of the change
that caused it, so `enqueue_many` writes the rows django_tasks_db's `enqueue()` would
write (its pre_save default included), with one statement, and sends the same
`task_enqueued` signal for each.
tests/api/test_bulk_enqueue.py checks that the rows are those `enqueue()` writes.
"""

from collections.abc import Iterable, Sequence
from typing import Any

from django_tasks.signals import task_enqueued
from django_tasks.utils import normalize_json
from django_tasks_db.models import DBTaskResult, get_date_max


def enqueue_many(task: Any, calls: Iterable[Sequence[Any]]) -> list:
    """Enqueue `task(*args)` for each `args` of `calls`; their TaskResults."""
    backend = task.get_backend()
    backend.validate_task(task)
    new_id = backend.id_function or DBTaskResult._meta.pk.default
    rows = DBTaskResult.objects.bulk_create(
        [
            DBTaskResult(
                id=new_id(),
                args_kwargs=normalize_json({"args": list(args), "kwargs": {}}),
                priority=task.priority,
                task_path=task.module_path,
                queue_name=task.queue_name,
                # What django_tasks_db's pre_save handler sets (bulk_create sends no signal).
                run_after=task.run_after or get_date_max(),
                backend_name=backend.alias,
            )
            for args in calls
        ]
    )
    results = [row.task_result for row in rows]
    for result in results:
        task_enqueued.send(type(backend), task_result=result)
    return results
