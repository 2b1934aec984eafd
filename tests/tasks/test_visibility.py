"""What an operator sees of the background work: the tasks in the admin (every one for
superusers, a manager's organization's for a manager), each organization's auto-replies
(scoped like every record), `tasks_status`."""

import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from messaging_project.worker.models import WorkerHeartbeat
from messaging_project.worker.turns import enqueue_in_turn
from sending.models import AutoReply
from tests.background import run_tasks
from tests.sending.factories import ChatFactory
from tests.tasks import jobs

pytestmark = pytest.mark.django_db
TASKS = reverse("admin:django_tasks_database_dbtaskresult_changelist")


def owed_reply(organization, word: str) -> AutoReply:
    inbound = ChatFactory(organization=organization, type="inbound", status="received")
    return AutoReply.objects.create(
        organization=organization,
        inbound=inbound,
        message=f"{word} reply text",
        state="unknown",
        attempts=1,
        last_error=f"{word} error",
    )


def test_superusers_see_each_task_with_its_attempts_and_last_error(admin_super, runs_table):
    jobs.always_fails.enqueue()
    jobs.record_run.enqueue(1)
    run_tasks()
    DBTaskResult.objects.filter(status="SUCCESSFUL").update(worker_ids=["died", "test"])

    response = admin_super.get(TASKS)

    assert response.status_code == 200
    rows = {row.task_name: row for row in response.context["cl"].result_list}
    assert set(rows) == {"always_fails", "record_run"}
    page = response.text
    assert "RuntimeError: This task always fails." in page
    model_admin = response.context["cl"].model_admin
    assert model_admin.attempts(rows["record_run"]) == 2
    assert model_admin.attempts(rows["always_fails"]) == 1


def test_a_manager_sees_only_the_tasks_enqueued_for_their_organization(
    admin_a, org_a, org_b, runs_table
):
    mine = enqueue_in_turn(jobs.record_run, org_a.pk, 1)
    theirs = enqueue_in_turn(jobs.record_run, org_b.pk, 2)
    cleanup = jobs.record_run.enqueue(3)  # for no organization, like the clean-ups

    listing = admin_a.get(TASKS)
    assert listing.status_code == 200
    assert [row.pk for row in listing.context["cl"].result_list] == [uuid.UUID(mine.id)]

    def change(result) -> str:
        return reverse("admin:django_tasks_database_dbtaskresult_change", args=[result.id])

    assert admin_a.get(change(mine)).status_code == 200
    assert admin_a.get(change(theirs)).status_code == 404
    assert admin_a.get(change(cleanup)).status_code == 404


def test_staff_see_their_organizations_auto_replies_and_not_others(admin_a, org_a, org_b):
    mine = owed_reply(org_a, "Alpha")
    theirs = owed_reply(org_b, "Bravo")

    listing = admin_a.get(reverse("admin:sending_autoreply_changelist"))
    assert listing.status_code == 200
    assert "Alpha error" in listing.text and "Bravo error" not in listing.text

    detail = admin_a.get(reverse("admin:sending_autoreply_change", args=[mine.pk]))
    assert detail.status_code == 200 and "Alpha reply text" in detail.text
    other = admin_a.get(reverse("admin:sending_autoreply_change", args=[theirs.pk]))
    assert other.status_code == 404


@pytest.mark.parametrize("copies", [1, 5])
def test_the_auto_reply_list_has_a_fixed_query_count(
    admin_a, org_a, django_assert_num_queries, copies
):
    for n in range(copies):
        owed_reply(org_a, f"Word{n}")
    # session, user, membership, permissions (user's, groups'), count, rows with their
    # inbound chats and contacts (one join), the state filter's choices
    with django_assert_num_queries(7):
        response = admin_a.get(reverse("admin:sending_autoreply_changelist"))
    assert response.status_code == 200


def test_tasks_status_prints_the_queue_depth_and_the_oldest_waiting_task(capsys, settings):
    settings.TASK_WORKER_TIMEOUT = 60
    now = timezone.now()
    for key in range(3):
        jobs.record_run.enqueue(key)
    DBTaskResult.objects.filter(args_kwargs__args=[0]).update(
        enqueued_at=now - timedelta(seconds=90)
    )
    jobs.record_run.using(run_after=now + timedelta(minutes=5)).enqueue(9)
    WorkerHeartbeat.objects.create(
        worker_id="web-1-abc", host="web-1", pid=42, threads=16, last_seen=now
    )
    WorkerHeartbeat.objects.create(
        worker_id="gone", host="web-2", pid=7, threads=16, last_seen=now - timedelta(hours=1)
    )

    call_command("tasks_status")

    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Queue depth: 3 ready, the oldest waiting 9")
    assert float(lines[0].split("waiting ")[1].split(" s")[0]) >= 90
    assert "Deferred (retries waiting for their time): 1" in out
    assert "Workers alive: 1" in out
    assert "web-1-abc: 16 thread(s) on web-1, pid 42" in out
    assert "gone" not in out


def test_tasks_status_of_an_empty_queue(capsys):
    call_command("tasks_status")
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Queue depth: 0 ready"
    assert "event-deliveries: 0 event(s) to fan out; 0 delivery(ies) pending" in out


def test_tasks_status_shows_the_events_waiting_for_a_worker(capsys, org_a):
    """Events not yet fanned out are the sign of a worker missing: their number and the
    oldest's age; then the deliveries they became."""
    from events import services
    from events.delivery import fan_out
    from events.models import Emission

    services.create_endpoint(organization=org_a, url="https://example.com/hook")
    for n in range(2):
        services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": n})
    Emission.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    call_command("tasks_status")
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("event-deliveries")]
    assert line.startswith("event-deliveries: 2 event(s) to fan out, the oldest for 12")
    assert line.endswith("; 0 delivery(ies) pending")
    fan_out()
    call_command("tasks_status")
    out = capsys.readouterr().out
    assert "event-deliveries: 0 event(s) to fan out; 2 delivery(ies) pending" in out
