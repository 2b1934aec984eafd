"""Fixtures for the background work: the runs table of tests/tasks/jobs.py, and an
organization on the fake Cloud API that receives signed webhooks."""

import pytest

from tests.admin.conftest import (  # noqa: F401 - the admin's fixtures, for test_visibility
    admin_a,
    admin_super,
    fast_passwords,
    staff_a,
    superuser,
)
from tests.channel import set_channel
from tests.inbound.conftest import APP_SECRET, answer_hours
from tests.tasks import jobs


@pytest.fixture
def runs_table(db):
    jobs.create_runs_table()
    yield
    jobs.drop_runs_table()


@pytest.fixture
def cloud_webhook_org(cloud_org):
    set_channel(cloud_org, app_secret=APP_SECRET)
    return cloud_org


@pytest.fixture
def hours(cloud_webhook_org):
    """A canned reply to "hours", the one the tasks' tests answer."""
    return answer_hours(cloud_webhook_org)


def sends(graph) -> list:
    """The messages that reached the fake Cloud API."""
    return [r for r in graph.requests if r.method == "POST" and r.path.endswith("/messages")]
