"""`GET /metrics`: the service's counters (messaging_project/core/metrics.py) and the
task queue's figures, in Prometheus' text format.

The task queue's figures are read from the database at each scrape, so they are the
same whichever process answers. /metrics needs `Authorization: Bearer $METRICS_TOKEN`:
404 while METRICS_TOKEN is empty (the endpoint is off), 401 with another token. A wrong
token counts toward the client address's failed-authentication limit, as a wrong API
token does (auth_failures.py): past it, 429 whatever the token.
"""

import hmac

import prometheus_client
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily

from messaging_project.api import auth_failures
from messaging_project.core.client_address import client_address
from messaging_project.core.metrics import RATE_LIMIT_REFUSALS, counters
from messaging_project.worker.status import ready_queue


class TaskQueueCollector:
    """The task queue as the database has it now, read at each scrape."""

    def collect(self):
        depth, oldest = ready_queue()
        yield GaugeMetricFamily(
            "task_queue_depth", "Tasks due and waiting for a worker.", value=depth
        )
        yield GaugeMetricFamily(
            "task_queue_oldest_wait_seconds",
            "How long the longest-waiting due task has waited (0 when none waits).",
            value=oldest.total_seconds() if oldest is not None else 0.0,
        )


def exposition() -> bytes:
    queue = CollectorRegistry(auto_describe=False)
    queue.register(TaskQueueCollector())
    return counters() + prometheus_client.generate_latest(queue)


@require_GET
def metrics_view(request):
    expected = settings.METRICS_TOKEN
    if not expected:
        return JsonResponse({"statusCode": 404, "message": "Not found."}, status=404)
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    address = client_address(request)
    if header and (wait := auth_failures.blocked_for(address)) is not None:
        return too_many_attempts(wait)
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), expected.encode()
    ):
        # A guess (any token given) counts; a scrape without a header is a mistake.
        if header and (wait := auth_failures.record_failure(address)) is not None:
            return too_many_attempts(wait)
        response = JsonResponse({"statusCode": 401, "message": "Unauthorized."}, status=401)
        response["WWW-Authenticate"] = "Bearer"
        return response
    response = HttpResponse(exposition(), content_type=prometheus_client.CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


def too_many_attempts(wait: int) -> JsonResponse:
    RATE_LIMIT_REFUSALS.labels(limit="auth_failures").inc()
    response = JsonResponse({"statusCode": 429, "message": "Too Many Attempts."}, status=429)
    response["Retry-After"] = str(wait)
    return response
