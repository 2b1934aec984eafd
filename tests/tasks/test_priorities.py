"""Which task a worker thread takes next: interactive work before bulk work, and bulk work
in at most some of a process's threads (messaging_project/worker/priorities.py)."""

import threading

import pytest
from django.db import connection, transaction
from django_tasks_db.models import DBTaskResult

from campaigns.tasks import send_campaign
from inbound.auto_replies import send_auto_reply
from inbound.media import fetch_media
from messaging_project.worker.priorities import BULK, INTERACTIVE, bulk_threads, is_bulk
from messaging_project.worker.runner import Worker
from tests.databases import on_postgresql
from tests.tasks import jobs


def test_the_tasks_carry_their_kind_of_work():
    assert send_auto_reply.priority == fetch_media.priority == INTERACTIVE
    assert send_campaign.priority == BULK and is_bulk(BULK)
    assert not is_bulk(jobs.record_run.priority)  # the default: the clean-ups


@pytest.mark.parametrize(("threads", "bulk"), [(1, 1), (2, 1), (4, 3), (8, 6), (16, 12)])
def test_a_quarter_of_the_threads_is_kept_from_bulk_work(threads, bulk):
    assert bulk_threads(threads) == bulk


def test_the_highest_priority_is_claimed_first_then_the_oldest(runs_table):
    jobs.record_run.using(priority=BULK).enqueue(1)
    jobs.record_run.enqueue(2)
    jobs.record_run.using(priority=INTERACTIVE).enqueue(3)
    jobs.record_run.using(priority=INTERACTIVE).enqueue(4)
    worker = Worker(worker_id="ordered")
    while worker.run_one():
        pass
    started = DBTaskResult.objects.order_by("started_at").values_list("args_kwargs", flat=True)
    assert [run["args"][0] for run in started] == [3, 4, 2, 1]


def test_threads_at_the_bulk_limit_claim_only_other_work(runs_table):
    bulk = jobs.record_run.using(priority=BULK).enqueue(1)
    worker = Worker(worker_id="kept", threads=4)
    assert worker.bulk_limit == 3
    worker.bulk_running = 3  # three threads run campaigns already
    assert not worker.run_one()  # the bulk task waits for one of them
    interactive = jobs.record_run.using(priority=INTERACTIVE).enqueue(2)
    assert worker.run_one()
    assert DBTaskResult.objects.get(pk=interactive.id).status == "SUCCESSFUL"
    assert DBTaskResult.objects.get(pk=bulk.id).status == "READY"
    assert worker.bulk_running == 3  # the place it tried was given back
    worker.bulk_running = 2
    assert worker.run_one()
    assert DBTaskResult.objects.get(pk=bulk.id).status == "SUCCESSFUL"
    assert worker.bulk_running == 2  # its place given back when it ended


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_threads_claiming_at_once_run_no_more_bulk_tasks_than_the_limit(runs_table):
    """Eight threads of a process with a limit of six, twenty bulk tasks that each wait
    until all are released: six run, two threads claim nothing."""
    with transaction.atomic():
        for key in range(20):
            jobs.record_run.using(priority=BULK).enqueue(key)
    worker = Worker(worker_id="limited", threads=8)
    release = threading.Event()
    running = []
    original = worker.runner

    def runner():
        task_runner = original()
        run_task = task_runner.run_task

        def held(task_result):
            running.append(task_result.pk)
            release.wait(10)
            run_task(task_result)

        task_runner.run_task = held
        return task_runner

    worker.runner = runner
    claimed = []

    def thread() -> None:
        claimed.append(worker.run_one())
        connection.close()

    threads = [threading.Thread(target=thread) for _ in range(8)]
    for started in threads:
        started.start()
    for _ in range(100):
        if len(running) + claimed.count(False) == 8:
            break
        threading.Event().wait(0.05)
    try:
        assert len(running) == 6 and claimed.count(False) == 2
        assert worker.bulk_running == 6
    finally:
        release.set()
        for started in threads:
            started.join(20)
    assert worker.bulk_running == 0
    assert DBTaskResult.objects.filter(status="SUCCESSFUL").count() == 6
