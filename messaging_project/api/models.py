"""The base layer's own records. The organization is named by string: the base imports
no app, accounts sits above it."""

from django.db import models


class IdempotencyKey(models.Model):
    """The first outcome of a request sent with an `Idempotency-Key`, kept for replay.

    The row is claimed (inserted) before the request runs, so a concurrent retry finds
    it and gets a 409 instead of running twice; the unique constraint is what makes
    that safe across workers.
    """

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")
    completed = models.BooleanField(default=False)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="unique_idempotency_key")
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_age")]

    def __str__(self) -> str:
        return self.key


class WorkerHeartbeat(models.Model):
    """A task worker process that is alive, as last heard from.

    Every worker writes its row every few seconds (messaging_project/api/worker.py). A
    task still `RUNNING` under a worker not heard from for TASK_WORKER_TIMEOUT seconds
    was abandoned (the process was killed or its machine died) and runs again.
    """

    worker_id = models.CharField(max_length=64, unique=True)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    threads = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.worker_id} ({self.host}, pid {self.pid})"


class PeriodicRun(models.Model):
    """A periodic task enqueued for one period. The unique constraint is what makes
    several workers (each with its scheduler) enqueue it at most once per period."""

    job = models.CharField(max_length=100)
    period = models.DateTimeField(help_text="The start of the period it was enqueued for.")
    enqueued_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "period"], name="unique_periodic_run")
        ]

    def __str__(self) -> str:
        return f"{self.job} for {self.period:%Y-%m-%d %H:%M}"
