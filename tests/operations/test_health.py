"""/health/live and /health/ready: JSON, no token, 503 naming what is wrong, with the
database down (on SQLite and on PostgreSQL: the connection pointed at nothing)."""

import os
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from devtools.loopback import free_port
from inbound.auto_replies import send_auto_reply

pytestmark = pytest.mark.django_db(transaction=True)


def get(path):
    response = Client().get(path)
    return response.status_code, response.json(), response


def test_live_answers_without_a_token():
    status, body, response = get("/health/live")
    assert (status, body) == (200, {"status": "ok"})
    assert "no-store" in response["Cache-Control"]


def test_ready_reports_every_check_when_all_is_well():
    status, body, _ = get("/health/ready")
    assert status == 200, body
    assert body == {
        "status": "ok",
        "checks": {name: {"status": "ok"} for name in ("database", "cache", "task_queue")},
    }


@pytest.fixture
def database_down(settings):
    """The default connection pointed at a database that is not there, then restored."""
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = os.path.join(
            str(settings.VAR_DIR), "no-such-dir", "gone.sqlite3"
        )
    else:
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))
    # The default cache is a table of that database too.
    settings.CACHES = {
        "default": {
            "BACKEND": "messaging_project.core.cache.AtomicDatabaseCache",
            "LOCATION": "django_cache",
        }
    }
    yield
    connection.close()
    connection.settings_dict.clear()
    connection.settings_dict.update(saved)


def test_ready_is_a_503_naming_the_database_when_it_is_down(database_down):
    status, body, _ = get("/health/ready")
    assert status == 503
    assert body["status"] == "unavailable"
    assert body["checks"]["database"]["status"] == "unavailable"
    assert "database" in body["message"]
    assert body["checks"]["task_queue"]["status"] == "unavailable"
    assert body["checks"]["cache"]["status"] == "unavailable"
    # Live stays up: restarting the web process would not bring the database back.
    assert get("/health/live")[0] == 200


def test_ready_fails_when_the_oldest_pending_task_waited_too_long(settings, org_a):
    settings.HEALTH_TASK_QUEUE_MAX_AGE = 60
    result = send_auto_reply.enqueue(0)
    DBTaskResult.objects.filter(id=result.id).update(
        enqueued_at=timezone.now() - timedelta(seconds=120)
    )
    status, body, _ = get("/health/ready")
    assert status == 503
    assert body["message"] == "Not ready: task_queue."
    assert body["checks"]["task_queue"]["status"] == "unavailable"
    # 120 s, or 121 when the request itself took the rest of that second
    assert re.search(r"waited 12[01] s", body["checks"]["task_queue"]["error"])
    assert body["checks"]["database"] == {"status": "ok"}

    settings.HEALTH_TASK_QUEUE_MAX_AGE = 600
    assert get("/health/ready")[0] == 200
