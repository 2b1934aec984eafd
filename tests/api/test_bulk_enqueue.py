"""enqueue_many writes the rows that django_tasks_db's enqueue() writes, in one INSERT,
and the worker runs them."""

import pytest
from django.forms.models import model_to_dict
from django_tasks.signals import task_enqueued
from django_tasks_db.models import DBTaskResult

from messaging_project.api.bulk_enqueue import enqueue_many
from messaging_project.api.tasks import purge_bookkeeping, purge_idempotency_keys
from tests.background import run_tasks

pytestmark = pytest.mark.django_db

COMPARED_AWAY = {"id", "enqueued_at"}


def row(result) -> dict:
    stored = DBTaskResult.objects.get(pk=result.id)
    return {k: v for k, v in model_to_dict(stored).items() if k not in COMPARED_AWAY}


def test_the_rows_are_those_enqueue_writes(django_assert_num_queries):
    one = purge_idempotency_keys.enqueue()
    with django_assert_num_queries(1):
        many = enqueue_many(purge_idempotency_keys, [(), ()])
    assert len(many) == 2 and len({r.id for r in many}) == 2
    assert row(many[0]) == row(one) == row(many[1])


def test_the_signal_is_sent_for_each():
    seen = []

    def receiver(sender, task_result, **kwargs):
        seen.append(task_result.id)

    task_enqueued.connect(receiver)
    try:
        results = enqueue_many(purge_bookkeeping, [(), (), ()])
    finally:
        task_enqueued.disconnect(receiver)
    assert seen == [r.id for r in results]


def test_the_worker_runs_them():
    enqueue_many(purge_bookkeeping, [(), ()])
    assert run_tasks() == 2
    assert DBTaskResult.objects.successful().count() == 2
