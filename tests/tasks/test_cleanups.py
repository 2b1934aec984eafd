"""The periodic clean-ups delete what is past its time and nothing else."""

from datetime import timedelta

from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from messaging_project.api.models import IdempotencyKey
from messaging_project.api.tasks import purge_idempotency_keys
from messaging_project.worker import tasks as clean_ups
from messaging_project.worker.models import PeriodicRun, WorkerHeartbeat
from tests.background import run_tasks
from tests.tasks import jobs


def aged(queryset, **ages) -> None:
    now = timezone.now()
    queryset.update(**{field: now - age for field, age in ages.items()})


def test_idempotency_keys_older_than_a_day_are_purged_and_younger_ones_still_replay(api, org_a):
    first = api.post(
        "/api/contacts",
        {"phone": "+14155552671", "first_name": "Ada"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="old",
    )
    assert first.status_code == 200
    api.post(
        "/api/contacts",
        {"phone": "+14155552672", "first_name": "Bea"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="recent",
    )
    aged(IdempotencyKey.objects.filter(key="old"), created_at=timedelta(hours=24, minutes=1))
    aged(IdempotencyKey.objects.filter(key="recent"), created_at=timedelta(hours=23))

    assert purge_idempotency_keys.call() == 1

    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["recent"]
    replay = api.post(
        "/api/contacts",
        {"phone": "+14155552672", "first_name": "Bea"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="recent",
    )
    assert replay["Idempotent-Replayed"] == "true"


def test_finished_tasks_are_pruned_after_their_days_and_unfinished_ones_stay(runs_table, settings):
    settings.TASK_RESULTS_KEPT_DAYS = 7
    for key in range(3):
        jobs.record_run.enqueue(key)
    jobs.always_fails.enqueue()
    run_tasks()
    aged(DBTaskResult.objects.all(), finished_at=timedelta(days=8))
    recent = jobs.record_run.enqueue(10)
    run_tasks()
    running = jobs.record_run.enqueue(11)
    DBTaskResult.objects.filter(pk=running.id).update(status="RUNNING")
    waiting = jobs.record_run.enqueue(12)
    aged(
        DBTaskResult.objects.filter(pk__in=[running.id, waiting.id]), enqueued_at=timedelta(days=9)
    )

    assert clean_ups.prune_task_results.call() == 4  # three successful, one failed

    assert {str(pk) for pk in DBTaskResult.objects.values_list("id", flat=True)} == {
        recent.id,
        running.id,
        waiting.id,
    }


def test_expired_admin_sessions_are_purged(db):
    for expired in (True, False):
        session = SessionStore()
        session["user"] = "someone"
        session.set_expiry(-60 if expired else 3600)
        session.save()

    clean_ups.purge_expired_sessions.call()

    assert Session.objects.count() == 1
    assert Session.objects.get().expire_date > timezone.now()


def test_old_schedule_rows_and_long_dead_workers_are_purged(db):
    now = timezone.now()
    PeriodicRun.objects.create(job="old", period=now - timedelta(days=3))
    PeriodicRun.objects.create(job="recent", period=now - timedelta(hours=1))
    WorkerHeartbeat.objects.create(
        worker_id="gone", host="h", pid=1, threads=1, last_seen=now - timedelta(days=3)
    )
    WorkerHeartbeat.objects.create(worker_id="alive", host="h", pid=2, threads=1, last_seen=now)

    assert clean_ups.purge_bookkeeping.call() == 2

    assert list(PeriodicRun.objects.values_list("job", flat=True)) == ["recent"]
    assert list(WorkerHeartbeat.objects.values_list("worker_id", flat=True)) == ["alive"]
