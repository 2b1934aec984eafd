"""The upgrade that moved the auto-reply and media download tasks from sending.tasks to
the inbound app (inbound 0001): a task still waiting, or left running by a dead worker,
runs under its new path; a finished one keeps the path it ran under."""

import pytest
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from inbound.auto_replies import send_auto_reply
from inbound.media import fetch_media
from tests.databases import migrate

BEFORE = [("inbound", None)]


def task_row(path: str, status: str) -> DBTaskResult:
    return DBTaskResult.objects.create(
        task_path=path, status=status, args_kwargs={"args": [1], "kwargs": {}}
    )


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_waiting_tasks_move_to_their_new_paths_and_back():
    migrate(BEFORE)
    try:
        waiting = task_row("sending.tasks.send_auto_reply", TaskResultStatus.READY)
        running = task_row("sending.tasks.fetch_media", TaskResultStatus.RUNNING)
        finished = task_row("sending.tasks.fetch_media", TaskResultStatus.SUCCESSFUL)
        other = task_row("inbound.tasks.play_sandbox_statuses", TaskResultStatus.READY)
    finally:
        migrate(None)

    paths = dict(DBTaskResult.objects.values_list("pk", "task_path"))
    assert (
        paths[waiting.pk] == send_auto_reply.module_path == "inbound.auto_replies.send_auto_reply"
    )
    assert paths[running.pk] == fetch_media.module_path == "inbound.media.fetch_media"
    assert paths[finished.pk] == "sending.tasks.fetch_media"
    assert paths[other.pk] == "inbound.tasks.play_sandbox_statuses"

    migrate(BEFORE)
    try:
        paths = dict(DBTaskResult.objects.values_list("pk", "task_path"))
        assert paths[waiting.pk] == "sending.tasks.send_auto_reply"
        assert paths[running.pk] == "sending.tasks.fetch_media"
    finally:
        migrate(None)
