"""Heartbeats and the recovery of tasks whose worker died.

Each worker process writes its WorkerHeartbeat every few seconds. A task left RUNNING
by a worker not heard from for TASK_WORKER_TIMEOUT seconds (killed, out of memory, its
machine gone) is made READY again and another worker runs it: tasks run at least once,
and are written to be idempotent. A task whose workers died under it TASK_MAX_ATTEMPTS
times is marked FAILED instead, so one task that kills its worker cannot take every
worker down in turn.
"""

import logging
import os
import socket
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from messaging_project.worker.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

ABANDONED = (
    "{runs} runs of this task ended without a record of how (their worker was killed, "
    "or lost its machine or its database); it is not run again."
)


class TaskAbandoned(Exception):
    """Recorded as the error of a task whose workers kept dying while they ran it."""


def beat(worker_id: str, threads: int) -> None:
    """Say that this worker is alive."""
    now = timezone.now()
    if not WorkerHeartbeat.objects.filter(worker_id=worker_id).update(last_seen=now):
        WorkerHeartbeat.objects.create(
            worker_id=worker_id,
            host=socket.gethostname()[:255],
            pid=os.getpid(),
            threads=threads,
            last_seen=now,
        )


def requeue(task: DBTaskResult, why: str) -> int:
    """Put a task whose run ended without a record back in the queue, or mark it FAILED
    once it has been taken TASK_MAX_ATTEMPTS times. Conditional on the task still being
    in that run, so concurrent callers change it once; 1 if this call changed it."""
    same_run = DBTaskResult.objects.filter(
        pk=task.pk, status=TaskResultStatus.RUNNING, started_at=task.started_at
    )
    runs = len(task.worker_ids)
    if runs >= settings.TASK_MAX_ATTEMPTS:
        changed = same_run.update(
            status=TaskResultStatus.FAILED,
            finished_at=timezone.now(),
            exception_class_path=f"{__name__}.{TaskAbandoned.__qualname__}",
            traceback=f"{__name__}.TaskAbandoned: {ABANDONED.format(runs=runs)}\n",
        )
        if changed:
            logger.error("Task %s (%s) %s %s times: failed", task.pk, task.task_path, why, runs)
        return changed
    changed = same_run.update(status=TaskResultStatus.READY, started_at=None)
    if changed:
        logger.warning("Task %s (%s) %s: it runs again", task.pk, task.task_path, why)
    return changed


def recover_abandoned_tasks(
    timeout: timedelta | None = None, *, worker_id: str = "", running: frozenset = frozenset()
) -> int:
    """Make abandoned tasks READY again (or FAILED after too many runs); how many.

    A task is abandoned when it has been RUNNING for longer than the timeout and the
    worker that took it has not been heard from for as long (it died), or when that
    worker is the caller, `worker_id`, and none of its threads runs it (`running`): its
    claim committed but the answer was lost, or its end could not be recorded, with
    the database gone for a moment.
    """
    timeout = timeout or timedelta(seconds=settings.TASK_WORKER_TIMEOUT)
    cutoff = timezone.now() - timeout
    alive = set(
        WorkerHeartbeat.objects.filter(last_seen__gte=cutoff).values_list("worker_id", flat=True)
    )
    recovered = 0
    stale = DBTaskResult.objects.running().filter(started_at__lt=cutoff)
    for task in stale.only("id", "task_path", "worker_ids", "started_at"):
        taken_by = task.worker_ids[-1] if task.worker_ids else ""
        if taken_by and taken_by == worker_id:
            if str(task.pk) not in running:
                recovered += requeue(task, "lost its database connection")
        elif taken_by not in alive:
            recovered += requeue(task, "was abandoned by a dead worker")
    return recovered
