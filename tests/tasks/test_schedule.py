"""The periodic clean-ups are enqueued by the workers, each at most once per period
however many workers (each with its scheduler) look at once."""

from datetime import UTC, datetime, timedelta

import pytest

from messaging_project.worker.models import PeriodicRun
from messaging_project.worker.schedule import Scheduler, discover
from tests.background import tasks
from tests.contacts.test_contact_counter import run_concurrently
from tests.databases import on_postgresql

CLEAN_UPS = {
    "messaging_project.api.tasks.purge_idempotency_keys": timedelta(hours=1),
    "messaging_project.worker.tasks.prune_task_results": timedelta(hours=1),
    "messaging_project.worker.tasks.purge_expired_sessions": timedelta(days=1),
    "messaging_project.worker.tasks.purge_bookkeeping": timedelta(days=1),
    "events.tasks.prune_deliveries": timedelta(days=1),
}
# Not clean-ups: the minutely look for campaigns left without a sender (campaigns/tasks.py)
# and the fold of the figures' increments (analytics/tasks.py).
OTHERS = {
    "campaigns.tasks.resume_campaigns": timedelta(minutes=1),
    "analytics.tasks.fold_increments": timedelta(minutes=1),
}
NOON = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def enqueued() -> list[str]:
    return sorted(task.task_path for task in tasks() if task.task_path in CLEAN_UPS)


class Scheduler(Scheduler):
    """The clean-ups' part of the schedule (the others come every minute)."""

    def enqueue_due(self, now=None) -> list[str]:
        return [name for name in super().enqueue_due(now) if name in CLEAN_UPS]


def test_the_clean_ups_are_scheduled_hourly_or_daily():
    assert {name: job.interval for name, job in discover().items()} == CLEAN_UPS | OTHERS


def test_each_job_is_enqueued_once_per_period(db):
    first, second = Scheduler(), Scheduler()

    assert sorted(first.enqueue_due(NOON)) == sorted(CLEAN_UPS)
    assert first.enqueue_due(NOON + timedelta(minutes=59)) == []
    assert second.enqueue_due(NOON + timedelta(minutes=30)) == []  # another worker, same hour
    assert enqueued() == sorted(CLEAN_UPS)

    # The next hour: the hourly ones again, the daily ones not before tomorrow.
    assert sorted(second.enqueue_due(NOON + timedelta(hours=1))) == [
        "messaging_project.api.tasks.purge_idempotency_keys",
        "messaging_project.worker.tasks.prune_task_results",
    ]
    assert first.enqueue_due(NOON + timedelta(hours=1, minutes=1)) == []
    assert PeriodicRun.objects.filter(job__in=CLEAN_UPS).count() == len(CLEAN_UPS) + 2
    assert len(enqueued()) == len(CLEAN_UPS) + 2


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_schedulers_looking_at_once_enqueue_each_job_once():
    schedulers = [Scheduler() for _ in range(6)]

    results = run_concurrently([lambda s=s: s.enqueue_due(NOON) for s in schedulers])

    assert sorted(name for names in results for name in names) == sorted(CLEAN_UPS)
    assert enqueued() == sorted(CLEAN_UPS)
