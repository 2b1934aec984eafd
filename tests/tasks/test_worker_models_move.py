"""The worker's records moved from the API app (label `base`) to the worker app: an
upgrade keeps every heartbeat and period, their permissions, and the clean-ups still
waiting under their old task paths.

The test migrates the test database back to before the move (base 0002 applied, the
worker app unmigrated), stores rows with the old models, migrates forward again and
reads them with the new ones.
"""

from datetime import UTC, datetime

import pytest
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from messaging_project.worker.models import PeriodicRun, WorkerHeartbeat
from messaging_project.worker.tasks import prune_task_results
from tests.databases import migrate

BEFORE_THE_MOVE = [("base", "0002_worker_heartbeats_and_periodic_runs"), ("worker", None)]


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_heartbeats_periods_and_waiting_clean_ups_survive_the_move():
    heartbeat_type = ContentType.objects.get_for_model(WorkerHeartbeat)
    executor = migrate(BEFORE_THE_MOVE)
    try:
        old = executor.loader.project_state([BEFORE_THE_MOVE[0]]).apps
        old.get_model("base", "WorkerHeartbeat").objects.create(
            worker_id="w-1", host="old-host", pid=7, threads=4, last_seen=timezone.now()
        )
        old.get_model("base", "PeriodicRun").objects.create(
            job="messaging_project.api.tasks.prune_task_results",
            period=datetime(2030, 1, 1, tzinfo=UTC),
        )
        ContentType.objects.filter(pk=heartbeat_type.pk).update(app_label="base")
        waiting = DBTaskResult.objects.create(
            task_path="messaging_project.api.tasks.prune_task_results",
            args_kwargs={"args": [], "kwargs": {}},
            queue_name="default",
            backend_name="default",
            run_after=timezone.now(),
        )
    finally:
        migrate(None)

    assert WorkerHeartbeat.objects.get().host == "old-host"
    assert PeriodicRun.objects.get().period == datetime(2030, 1, 1, tzinfo=UTC)
    # The content type (and the permissions on it) moved with the model.
    ContentType.objects.clear_cache()
    assert ContentType.objects.get_for_model(WorkerHeartbeat).pk == heartbeat_type.pk
    # A clean-up enqueued under the old path runs the moved task.
    waiting.refresh_from_db()
    assert waiting.task_path == "messaging_project.worker.tasks.prune_task_results"
    assert waiting.task.func is prune_task_results.func
