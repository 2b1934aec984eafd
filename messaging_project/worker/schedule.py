"""Periodic tasks, enqueued by the workers themselves: no cron in the default setup.

An app's `tasks.py` marks a task periodic:

    @every(timedelta(hours=1))
    @task()
    def purge_idempotency_keys() -> int: ...

Time is cut into periods of that length (aligned on the epoch). Every worker looks a few
times a minute and enqueues each job whose current period has not been enqueued yet,
in one transaction with a PeriodicRun row for (job, period). The row is unique, so
however many workers look at once, on however many machines, a job is enqueued at most
once per period: the others' insert fails and they leave it.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.module_loading import autodiscover_modules

from messaging_project.worker.models import PeriodicRun


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    interval: timedelta
    task: Any

    def period(self, now: datetime) -> datetime:
        """The start of the period `now` falls in."""
        seconds = self.interval.total_seconds()
        return datetime.fromtimestamp(now.timestamp() // seconds * seconds, tz=now.tzinfo)


jobs: dict[str, PeriodicJob] = {}


def every(interval: timedelta):
    """Register a task (the result of `@task()`) to run once per `interval`."""

    def register(task):
        jobs[task.module_path] = PeriodicJob(task.module_path, interval, task)
        return task

    return register


def discover() -> dict[str, PeriodicJob]:
    """Import every app's `tasks` module, so that each periodic task is registered."""
    autodiscover_modules("tasks")
    return jobs


class Scheduler:
    """One per worker process. It remembers the periods it has seen, so it touches the
    database only when a period begins."""

    def __init__(self) -> None:
        self.seen: dict[str, datetime] = {}

    def enqueue_due(self, now: datetime | None = None) -> list[str]:
        """Enqueue the jobs whose current period nobody has enqueued; their names."""
        now = now or timezone.now()
        enqueued = []
        for job in discover().values():
            period = job.period(now)
            if self.seen.get(job.name) == period:
                continue
            try:
                with transaction.atomic():
                    PeriodicRun.objects.create(job=job.name, period=period)
                    job.task.enqueue()
                enqueued.append(job.name)
            except IntegrityError:
                pass  # another scheduler enqueued it for this period
            self.seen[job.name] = period
        return enqueued
