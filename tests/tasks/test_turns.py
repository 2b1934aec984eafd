"""Turns among organizations (messaging_project/worker/turns.py): one organization's
backlog delays another's next task by a turn, not by the whole backlog."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from inbound.auto_replies import send_auto_reply
from messaging_project.worker.models import TaskOrganization
from messaging_project.worker.priorities import BULK, INTERACTIVE, is_bulk
from messaging_project.worker.runner import Worker
from messaging_project.worker.tasks import prune_task_results
from messaging_project.worker.turns import LEVELS, enqueue_in_turn, turn_priority, waiting
from tests.inbound.conftest import deliver, envelope, text_message
from tests.tasks import jobs

A, B, C = 101, 202, 303


def claimed_keys(worker: Worker) -> list[int]:
    while worker.run_one():
        pass
    started = DBTaskResult.objects.order_by("started_at").values_list("args_kwargs", flat=True)
    return [run["args"][0] for run in started]


def test_each_organizations_first_task_goes_before_anyones_second(runs_table):
    for key in (1, 2, 3, 4, 5):  # A's backlog, enqueued first
        enqueue_in_turn(jobs.record_run, A, key)
    enqueue_in_turn(jobs.record_run, B, 21)
    enqueue_in_turn(jobs.record_run, B, 22)
    enqueue_in_turn(jobs.record_run, C, 31)
    assert claimed_keys(Worker(worker_id="turns")) == [1, 21, 31, 2, 22, 3, 4, 5]


def test_a_backlog_deeper_than_the_band_waits_at_its_bottom_in_arrival_order(runs_table):
    keys = list(range(1, LEVELS + 4))
    for key in keys:
        enqueue_in_turn(jobs.record_run, A, key)
    enqueue_in_turn(jobs.record_run, B, 100)
    # B's first goes second; A's tasks past the band's depth keep their order at its bottom.
    assert claimed_keys(Worker(worker_id="deep")) == [1, 100, *keys[1:]]


def test_only_waiting_tasks_count_and_only_in_their_band(runs_table):
    first = enqueue_in_turn(jobs.record_run, A, 1)
    enqueue_in_turn(jobs.record_run.using(priority=BULK), A, 2)
    assert waiting(A, jobs.record_run.priority) == 1
    assert waiting(A, BULK) == 1
    assert waiting(B, jobs.record_run.priority) == 0
    DBTaskResult.objects.filter(pk=first.id).update(status="RUNNING")
    assert waiting(A, jobs.record_run.priority) == 0  # running is not waiting
    assert enqueue_in_turn(jobs.record_run, A, 3).task.priority == turn_priority(0, 0)
    for key in range(20):
        enqueue_in_turn(jobs.record_run, B, key)
    assert waiting(B, jobs.record_run.priority) == LEVELS - 1  # counted to the band's depth


@pytest.mark.parametrize("depth", [0, 1, LEVELS - 1, LEVELS, 1000])
def test_the_bands_of_the_kinds_of_work_never_meet(depth):
    interactive = turn_priority(INTERACTIVE, depth)
    default = turn_priority(0, depth)
    bulk = turn_priority(BULK, depth)
    assert INTERACTIVE <= interactive < INTERACTIVE + LEVELS
    assert max(turn_priority(0, 0), default) < turn_priority(INTERACTIVE, 10**6)
    assert is_bulk(bulk) and is_bulk(turn_priority(BULK, 0)) and not is_bulk(default)


def test_the_organization_is_deleted_with_its_finished_task(runs_table, settings):
    settings.TASK_RESULTS_KEPT_DAYS = 1
    done = enqueue_in_turn(jobs.record_run, A, 1)
    kept = enqueue_in_turn(jobs.record_run, A, 2)
    DBTaskResult.objects.filter(pk=done.id).update(
        status="SUCCESSFUL", finished_at=timezone.now() - timedelta(days=2)
    )
    assert prune_task_results.call() == 1
    assert list(TaskOrganization.objects.values_list("task_id", flat=True)) == [
        DBTaskResult.objects.get(pk=kept.id).pk
    ]


def test_an_auto_reply_is_enqueued_in_its_organizations_turn(cloud_webhook_org, hours):
    assert deliver(cloud_webhook_org, envelope(text_message("hours?"))).status_code == 200
    reply = DBTaskResult.objects.get(task_path=send_auto_reply.module_path)
    assert reply.organization.organization_id == cloud_webhook_org.pk
    assert reply.priority == turn_priority(INTERACTIVE, 0)
