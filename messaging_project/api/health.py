"""`GET /health/live` and `GET /health/ready`, for load balancers and orchestrators.

Live says the process answers and touches nothing else: a failing database must not get
every web process restarted. Ready runs django-health-check's database and cache checks
and ours for the task queue (the oldest pending task has waited less than
HEALTH_TASK_QUEUE_MAX_AGE seconds), all at once, each within its timeout. Both are JSON,
need no token and name no secret; a failing check makes ready a 503 that names it.
"""

import asyncio
import dataclasses
import datetime

from django.conf import settings
from django.db import Error as DatabaseError
from django.db import connection
from django.http import JsonResponse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET
from health_check.base import HealthCheck
from health_check.checks import Cache, Database
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

from messaging_project.worker.status import ready_queue


@dataclasses.dataclass
class TaskQueue(HealthCheck):
    """The background queue is being worked: its oldest pending task is not too old
    (no worker running, or too few, shows here first)."""

    timeout = datetime.timedelta(seconds=5)

    def run(self) -> None:
        try:
            # Opened and closed here: the check runs on a thread of its own.
            with connection.temporary_connection():
                depth, oldest = ready_queue()
        except DatabaseError as error:
            raise ServiceUnavailable("the task queue cannot be read") from error
        limit = settings.HEALTH_TASK_QUEUE_MAX_AGE
        if oldest is not None and oldest.total_seconds() > limit:
            raise ServiceUnavailable(
                f"the oldest of {depth} pending tasks has waited "
                f"{oldest.total_seconds():.0f} s (limit {limit:g} s): are the workers running?"
            )


@dataclasses.dataclass
class SharedCache(Cache):
    """django-health-check's cache check, which also knows the database cache's errors
    (the default cache is a database table)."""

    async def run(self):
        try:
            await super().run()
        except DatabaseError as error:
            raise ServiceUnavailable("the cache's database cannot be reached") from error


CHECKS = {"database": Database, "cache": SharedCache, "task_queue": TaskQueue}


def health_response(body: dict, status: int) -> JsonResponse:
    response = JsonResponse(body, status=status)
    add_never_cache_headers(response)
    return response


@require_GET
def live(request):
    return health_response({"status": "ok"}, 200)


class ReadyView(HealthCheckView):
    """django-health-check's view, its checks run in parallel; answered in our shape:
    `{"status": "ok" | "unavailable", "checks": {name: {"status", "error"?}}}`, 503 with a
    `message` naming the failing checks."""

    checks = tuple(CHECKS.values())
    http_method_names = ["get"]

    async def get(self, request, *args, **kwargs):
        with self.get_executor() as executor:
            results = await asyncio.gather(
                *(check().get_result(executor) for check in CHECKS.values())
            )
        checks = {}
        for name, result in zip(CHECKS, results, strict=True):
            checks[name] = (
                {"status": "unavailable", "error": str(result.error)}
                if result.error
                else {"status": "ok"}
            )
        failing = [name for name, check in checks.items() if check["status"] != "ok"]
        if not failing:
            return health_response({"status": "ok", "checks": checks}, 200)
        body = {
            "status": "unavailable",
            "message": "Not ready: " + ", ".join(failing) + ".",
            "checks": checks,
        }
        return health_response(body, 503)


ready = ReadyView.as_view()
