"""`manage.py tasks_status`: the background queue's depth, its oldest task, the workers,
and a line for each app's own queue (the event deliveries)."""

from django.core.management.base import BaseCommand
from django.utils import timezone

from messaging_project.worker.queues import QUEUES
from messaging_project.worker.status import queue_status


def seconds(delta) -> str:
    return f"{delta.total_seconds():.1f} s"


class Command(BaseCommand):
    help = "Print the task queue's depth, the oldest waiting task's age and the live workers."

    def handle(self, *args, **options):
        status = queue_status()
        now = timezone.now()
        oldest = (
            f", the oldest waiting {seconds(status.oldest_wait)}"
            if status.oldest_wait is not None
            else ""
        )
        self.stdout.write(f"Queue depth: {status.ready} ready{oldest}")
        self.stdout.write(f"Deferred (retries waiting for their time): {status.deferred}")
        self.stdout.write(f"Running: {status.running}")
        self.stdout.write(f"Failed in the last 24 hours: {status.failed_last_day}")
        for queue in QUEUES:
            self.stdout.write(f"{queue.name}: {queue.backlog()}")
        self.stdout.write(f"Workers alive: {len(status.workers)}")
        for worker in status.workers:
            self.stdout.write(
                f"  {worker.worker_id}: {worker.threads} thread(s) on {worker.host}, "
                f"pid {worker.pid}, last seen {seconds(now - worker.last_seen)} ago"
            )
