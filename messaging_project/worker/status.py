"""The task queue as `tasks_status`, the readiness check and the metrics show it."""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max

from messaging_project.worker.models import WorkerHeartbeat


@dataclass(frozen=True)
class QueueStatus:
    ready: int  # due and waiting for a worker: the queue's depth
    oldest_wait: timedelta | None  # how long the longest-waiting of them has been due
    deferred: int  # waiting for their run_after (retries)
    running: int
    failed_last_day: int
    workers: list[WorkerHeartbeat]  # alive: heard from within TASK_WORKER_TIMEOUT


def ready_queue() -> tuple[int, timedelta | None]:
    """The queue's depth (tasks due and waiting for a worker) and how long the
    longest-waiting of them has been due (None when none waits): for tasks_status, the
    readiness check and the metrics."""
    now = timezone.now()
    never = get_date_max()
    ready = DBTaskResult.objects.ready()
    waited = []
    first = ready.filter(run_after=never).order_by("enqueued_at").only("enqueued_at").first()
    if first is not None:
        waited.append(now - first.enqueued_at)
    due = ready.exclude(run_after=never).order_by("run_after").only("run_after").first()
    if due is not None:
        waited.append(now - due.run_after)
    return ready.count(), max(waited) if waited else None


def queue_status() -> QueueStatus:
    """The queue as `manage.py tasks_status` shows it, in a few queries."""
    now = timezone.now()
    never = get_date_max()
    depth, oldest_wait = ready_queue()
    timeout = timedelta(seconds=settings.TASK_WORKER_TIMEOUT)
    return QueueStatus(
        ready=depth,
        oldest_wait=oldest_wait,
        deferred=DBTaskResult.objects.filter(
            status=TaskResultStatus.READY, run_after__gt=now, run_after__lt=never
        ).count(),
        running=DBTaskResult.objects.running().count(),
        failed_last_day=DBTaskResult.objects.failed()
        .filter(finished_at__gte=now - timedelta(days=1))
        .count(),
        workers=list(
            WorkerHeartbeat.objects.filter(last_seen__gte=now - timeout).order_by("started_at")
        ),
    )
