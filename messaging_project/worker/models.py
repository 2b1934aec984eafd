"""The task runtime's own records: the workers alive, and the periods the schedule
enqueued."""

from django.db import models


class WorkerHeartbeat(models.Model):
    """A task worker process that is alive, as last heard from.

    Every worker writes its row every few seconds (messaging_project/worker/runner.py). A
    task still `RUNNING` under a worker not heard from for TASK_WORKER_TIMEOUT seconds
    was abandoned (the process was killed or its machine died) and runs again.
    """

    worker_id = models.CharField(max_length=64, unique=True)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    threads = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()

    class Meta:
        # Created by the API app (label `base`) before the worker had an app of its own.
        db_table = "base_workerheartbeat"

    def __str__(self) -> str:
        return f"{self.worker_id} ({self.host}, pid {self.pid})"


class PeriodicRun(models.Model):
    """A periodic task enqueued for one period. The unique constraint is what makes
    several workers (each with its scheduler) enqueue it at most once per period."""

    job = models.CharField(max_length=100)
    period = models.DateTimeField(help_text="The start of the period it was enqueued for.")
    enqueued_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "base_periodicrun"  # as for WorkerHeartbeat
        constraints = [
            models.UniqueConstraint(fields=["job", "period"], name="unique_periodic_run")
        ]

    def __str__(self) -> str:
        return f"{self.job} for {self.period:%Y-%m-%d %H:%M}"


class TaskOrganization(models.Model):
    """The organization a task was enqueued for (turns.py), beside django_tasks_db's row,
    which has no place for it. Deleted with its task."""

    task = models.OneToOneField(
        "django_tasks_database.DBTaskResult",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="organization",
    )
    # An id, not a key to accounts: the worker imports no app.
    organization_id = models.BigIntegerField(db_index=True)

    def __str__(self) -> str:
        return f"{self.task_id} for organization {self.organization_id}"
