"""The background tasks in the admin (docs/admin.md): every task for superusers; for a
manager, only the tasks enqueued for their organization, never another's nor the tasks
for no organization (the clean-ups); a 403 for an agent, like every operator's page."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from accounts.models import Role
from accounts.services import create_staff_user
from messaging_project.worker.models import TaskOrganization
from tests.admin.conftest import PASSWORD, logged_in

pytestmark = pytest.mark.django_db

TASKS = reverse("admin:django_tasks_database_dbtaskresult_changelist")


def task(name: str, organization=None) -> DBTaskResult:
    """A failed task whose traceback names `name`, enqueued for `organization` (or for
    none, as the periodic clean-ups are)."""
    result = DBTaskResult.objects.create(
        task_path=f"tests.tasks.jobs.{name}",
        args_kwargs={"args": [], "kwargs": {}},
        status="FAILED",
        backend_name="default",
        run_after=timezone.now(),
        exception_class_path="builtins.RuntimeError",
        traceback=f"Traceback (most recent call last):\nRuntimeError: {name} failed",
    )
    if organization is not None:
        TaskOrganization.objects.create(task=result, organization_id=organization.pk)
    return result


@pytest.fixture
def tasks(org_a, org_b) -> dict[str, DBTaskResult]:
    return {
        "alpha": task("alpha_job", org_a),
        "bravo": task("bravo_job", org_b),
        "cleanup": task("cleanup_job"),
    }


def change(task: DBTaskResult) -> str:
    return reverse("admin:django_tasks_database_dbtaskresult_change", args=[task.pk])


def listed(response) -> set[str]:
    return {row.task_name for row in response.context["cl"].result_list}


@pytest.fixture
def agent_a(org_a):
    agent = create_staff_user(
        username="agnes", organization=org_a, password=PASSWORD, role=Role.AGENT
    )
    return logged_in(agent)


def test_a_manager_sees_their_organizations_tasks_only(admin_a, tasks):
    response = admin_a.get(TASKS)

    assert response.status_code == 200
    assert listed(response) == {"alpha_job"}
    assert "alpha_job failed" in response.text
    assert "bravo_job" not in response.text and "cleanup_job" not in response.text


def test_a_manager_opens_their_task_and_no_other(admin_a, tasks):
    page = admin_a.get(change(tasks["alpha"]))
    assert page.status_code == 200
    assert "RuntimeError: alpha_job failed" in page.text

    # Another organization's task, and one for no organization, are as if missing.
    assert admin_a.get(change(tasks["bravo"])).status_code == 404
    assert admin_a.get(change(tasks["cleanup"])).status_code == 404
    history = reverse("admin:django_tasks_database_dbtaskresult_history", args=[tasks["bravo"].pk])
    assert admin_a.get(history).status_code == 404


def test_the_filters_offer_only_the_managers_tasks(admin_a, tasks):
    DBTaskResult.objects.filter(pk=tasks["bravo"].pk).update(queue_name="bravo-queue")

    response = admin_a.get(TASKS)

    assert "bravo-queue" not in response.text
    filtered = admin_a.get(TASKS, {"queue_name": "bravo-queue"})
    assert filtered.status_code == 200 and listed(filtered) == set()


def test_the_page_stays_read_only_for_a_manager(admin_a, tasks):
    mine = tasks["alpha"]

    assert admin_a.post(change(mine), {"status": "SUCCESSFUL"}).status_code == 403
    add = reverse("admin:django_tasks_database_dbtaskresult_add")
    assert admin_a.get(add).status_code == 403
    delete = reverse("admin:django_tasks_database_dbtaskresult_delete", args=[mine.pk])
    assert admin_a.post(delete, {"post": "yes"}).status_code == 403
    mine.refresh_from_db()
    assert mine.status == "FAILED"


def test_the_index_shows_the_page_to_a_manager(admin_a):
    index = admin_a.get(reverse("admin:index"))

    assert TASKS in index.text


def test_an_agent_gets_a_403_and_no_link(agent_a, tasks):
    assert agent_a.get(TASKS).status_code == 403
    assert agent_a.get(change(tasks["alpha"])).status_code == 403
    assert TASKS not in agent_a.get(reverse("admin:index")).text


def test_staff_without_an_organization_get_a_403(tasks):
    loner = get_user_model().objects.create_user("loner", password=PASSWORD, is_staff=True)

    assert logged_in(loner).get(TASKS).status_code == 403


def test_a_superuser_sees_every_task(admin_super, tasks):
    response = admin_super.get(TASKS)

    assert response.status_code == 200
    assert listed(response) == {"alpha_job", "bravo_job", "cleanup_job"}
    for each in tasks.values():
        assert admin_super.get(change(each)).status_code == 200


@pytest.mark.parametrize("copies", [1, 5])
def test_a_managers_list_has_a_fixed_query_count(
    admin_a, org_a, org_b, django_assert_num_queries, copies
):
    for n in range(copies):
        task(f"alpha_{n}", org_a)
        task(f"bravo_{n}", org_b)
    # session, user, membership (with its organization), count, permissions (user's,
    # groups', for the other apps in the sidebar), rows, the queue filter's values
    with django_assert_num_queries(8):
        response = admin_a.get(TASKS)
    assert response.context["cl"].result_count == copies
