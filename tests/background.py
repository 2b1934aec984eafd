"""Running background work in tests: in this process, with the worker's own code.

The tests use the database backend, as production does, so a task is a row written in
the test's transaction; `run_tasks()` then claims and runs the ready ones the way a
worker thread does (messaging_project/worker/runner.py), and attempts the due event
deliveries (a queue of their own rows, events/delivery.py). Deferred tasks and
deliveries (retries) wait for their time; `make_due()` brings that moment forward.
"""

from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from events.models import Delivery, DeliveryStatus
from messaging_project.worker.inline import run_ready_tasks


def run_tasks() -> int:
    """Run every ready task (and those they enqueue) and attempt every due delivery,
    until none is left; how many tasks ran and deliveries were attempted."""
    return run_ready_tasks(worker_id="test")


def make_due() -> int:
    """Make every deferred task and delivery retry due now; how many."""
    now = timezone.now()
    retries = Delivery.objects.filter(
        status=DeliveryStatus.PENDING, claimed_until__isnull=True, next_attempt_at__gt=now
    ).update(next_attempt_at=now)
    return retries + DBTaskResult.objects.filter(
        status="READY", run_after__lt=get_date_max()
    ).update(run_after=now)


def tasks(path: str | None = None):
    """The stored tasks, oldest first, optionally of one task function's dotted path."""
    stored = DBTaskResult.objects.order_by("enqueued_at")
    return stored.filter(task_path=path) if path else stored
