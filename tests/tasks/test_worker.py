"""The worker in this process: each task taken once, dead workers' tasks run again,
idle workers woken by an enqueue, stopped cleanly."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from messaging_project.worker.inline import run_ready_tasks
from messaging_project.worker.models import WorkerHeartbeat
from messaging_project.worker.recovery import recover_abandoned_tasks
from messaging_project.worker.runner import Worker
from tests.background import tasks
from tests.contacts.test_contact_counter import run_concurrently
from tests.databases import on_postgresql
from tests.tasks import jobs


def running_task(*, workers: list[str], started: timedelta) -> DBTaskResult:
    """A task some worker took `started` ago and has not finished."""
    result = jobs.record_run.enqueue(1)
    DBTaskResult.objects.filter(pk=result.id).update(
        status="RUNNING", worker_ids=workers, started_at=timezone.now() - started
    )
    return DBTaskResult.objects.get(pk=result.id)


def heartbeat(worker_id: str, seen: timedelta) -> None:
    WorkerHeartbeat.objects.create(
        worker_id=worker_id, host="elsewhere", pid=1, threads=1, last_seen=timezone.now() - seen
    )


def test_ready_tasks_run_once_each_and_are_recorded(runs_table):
    for key in range(3):
        jobs.record_run.enqueue(key)
    jobs.always_fails.enqueue()

    assert run_ready_tasks() == 4
    assert run_ready_tasks() == 0

    assert [key for key, _, _ in jobs.runs()] == [0, 1, 2]
    assert sorted(t.status for t in tasks()) == ["FAILED", "SUCCESSFUL", "SUCCESSFUL", "SUCCESSFUL"]
    failed = tasks().get(status="FAILED")
    assert "This task always fails." in failed.traceback


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_threads_claiming_at_once_take_each_task_once(runs_table):
    with transaction.atomic():
        for key in range(200):
            jobs.record_run.enqueue(key)

    ran = run_concurrently([lambda n=n: run_ready_tasks(worker_id=f"w{n}") for n in range(6)])

    assert sum(ran) == 200
    keys = [key for key, _, _ in jobs.runs()]
    assert sorted(keys) == list(range(200))  # each once: none missing, none twice
    assert sum(1 for count in ran if count) > 1  # the work was shared


def test_the_task_of_a_worker_not_heard_from_runs_again(runs_table, settings):
    settings.TASK_WORKER_TIMEOUT = 30
    heartbeat("dead", seen=timedelta(minutes=5))
    task = running_task(workers=["dead"], started=timedelta(minutes=5))

    assert recover_abandoned_tasks() == 1
    assert recover_abandoned_tasks() == 0

    task.refresh_from_db()
    assert task.status == "READY"
    assert run_ready_tasks(worker_id="alive") == 1
    task.refresh_from_db()
    assert (task.status, task.worker_ids) == ("SUCCESSFUL", ["dead", "alive"])
    assert len(jobs.runs()) == 1


def test_a_long_task_of_a_live_worker_is_left_running(db, settings):
    settings.TASK_WORKER_TIMEOUT = 30
    heartbeat("busy", seen=timedelta(seconds=2))
    task = running_task(workers=["busy"], started=timedelta(minutes=10))
    just_taken = running_task(workers=["starting"], started=timedelta(seconds=1))

    assert recover_abandoned_tasks() == 0

    assert DBTaskResult.objects.get(pk=task.pk).status == "RUNNING"
    assert DBTaskResult.objects.get(pk=just_taken.pk).status == "RUNNING"


def test_a_task_whose_workers_keep_dying_fails_instead_of_running_again(db, settings):
    settings.TASK_WORKER_TIMEOUT = 30
    settings.TASK_MAX_ATTEMPTS = 3
    task = running_task(workers=["one", "two", "three"], started=timedelta(minutes=5))

    assert recover_abandoned_tasks() == 1

    task.refresh_from_db()
    assert task.status == "FAILED"
    assert task.exception_class_path == "messaging_project.worker.recovery.TaskAbandoned"
    assert "3 runs of this task ended without a record" in task.traceback
    assert run_ready_tasks() == 0


def serve_in_thread(worker: Worker) -> threading.Thread:
    def serve():
        try:
            worker.serve()
        finally:
            connections.close_all()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def wait_until(condition, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_a_serving_worker_runs_what_is_enqueued_beats_and_stops_cleanly(runs_table, settings):
    settings.TASK_WORKER_TIMEOUT = 4
    worker = Worker(worker_id="served", threads=3, interval=0.1)
    thread = serve_in_thread(worker)
    wait_until(lambda: WorkerHeartbeat.objects.filter(worker_id="served").exists())

    for key in range(10):
        jobs.record_run.enqueue(key)
    wait_until(lambda: len(jobs.runs()) == 10)
    # Its first round enqueued the periodic clean-ups too, and ran them.
    wait_until(lambda: not DBTaskResult.objects.exclude(status="SUCCESSFUL").exists())

    worker.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert not WorkerHeartbeat.objects.filter(worker_id="served").exists()
    assert sorted(key for key, _, _ in jobs.runs()) == list(range(10))
    assert {thread_name for _, _, thread_name in jobs.runs()} <= {"task-0", "task-1", "task-2"}


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_an_idle_worker_is_woken_by_the_commit_of_an_enqueue(runs_table, settings):
    # It would look for work only every 30 seconds on its own.
    worker = Worker(worker_id="listening", threads=1, interval=30)
    worker.heartbeat_every = 60
    thread = serve_in_thread(worker)
    wait_until(lambda: WorkerHeartbeat.objects.filter(worker_id="listening").exists())
    wait_until(lambda: not DBTaskResult.objects.exclude(status="SUCCESSFUL").exists())
    time.sleep(0.5)  # the worker is back to waiting

    started = time.monotonic()
    with transaction.atomic():
        jobs.record_run.enqueue(1)
    wait_until(lambda: len(jobs.runs()) == 1, seconds=5)
    took = time.monotonic() - started

    worker.stop()
    thread.join(35)
    assert took < 2


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_worker_that_loses_its_database_mid_task_carries_on_and_runs_the_task_again(
    runs_table, settings
):
    settings.TASK_WORKER_TIMEOUT = 2
    worker = Worker(worker_id="survivor", threads=1, interval=0.1)
    thread = serve_in_thread(worker)
    task = jobs.lose_connection_once.enqueue(7)

    wait_until(lambda: DBTaskResult.objects.get(pk=task.id).status == "SUCCESSFUL", seconds=30)

    assert thread.is_alive()  # the worker did not exit
    worker.stop()
    thread.join(10)
    assert [key for key, _, _ in jobs.runs()] == [7, 7]  # the first run, then its rerun
    assert DBTaskResult.objects.get(pk=task.id).worker_ids == ["survivor", "survivor"]


def test_a_notification_while_every_thread_is_busy_costs_no_query(db, django_assert_num_queries):
    # Each busy thread looks for its next task as its task ends: nothing to count.
    worker = Worker(worker_id="busy", threads=2)
    with django_assert_num_queries(0):
        worker.wake_runners()


def test_a_thread_that_looked_before_a_notification_looks_again_instead_of_sleeping(db):
    worker = Worker(worker_id="looking", threads=1)
    looked = worker.looks  # its look for a task began, found none...
    worker.wake_runners()  # ...and a task came meanwhile, no thread waiting to be counted
    started = time.monotonic()
    assert worker.wait_for_work(looked)
    assert time.monotonic() - started < 0.5
