"""The service's own Prometheus metrics, and `GET /metrics`.

django-prometheus counts the requests (its middleware) and the database queries (its
database backends); the counters below count what the service does. Every counter is
defined here, in the base, so that any app can increment one without importing another.

gunicorn runs several worker processes: with PROMETHEUS_MULTIPROC_DIR set (a directory
every process of the machine shares, emptied before they start), prometheus_client's
multiprocess mode adds their counts up, so a scrape that lands on any one worker sees
them all. Without it each process counts alone (docs/operations.md). The task queue's
figures are read from the database at each scrape, so they are the same whichever
process answers.

/metrics needs `Authorization: Bearer $METRICS_TOKEN`: 404 while METRICS_TOKEN is empty
(the endpoint is off), 401 with another token.
"""

import hmac
import os

import prometheus_client
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry, Counter, multiprocess
from prometheus_client.core import GaugeMetricFamily

SENDS = Counter(
    "whatsapp_sends",
    "Messages handed to the channel, by result (accepted, refused, credentials, "
    "unavailable, timeout, failed) and the channel's HTTP status ('none': no answer).",
    ["result", "status_code"],
)
INBOUND_MESSAGES = Counter(
    "whatsapp_inbound_messages", "Inbound messages recorded from WhatsApp's webhook."
)
WHATSAPP_WEBHOOKS = Counter(
    "whatsapp_webhook_deliveries",
    "Deliveries to /webhooks/whatsapp, by result (processed, bad_signature, malformed, "
    "unknown_organization).",
    ["result"],
)
EVENT_WEBHOOK_DELIVERIES = Counter(
    "event_webhook_deliveries",
    "Attempts to deliver an event to an organization's endpoint, by result "
    "(succeeded, retrying, failed).",
    ["result"],
)
RATE_LIMIT_REFUSALS = Counter(
    "rate_limit_refusals",
    "Requests answered 429, by limit (organization: API_RATE_LIMIT; auth_failures: "
    "API_AUTH_FAILURE_LIMIT).",
    ["limit"],
)


def count_send(result: str, status_code: int | None) -> None:
    SENDS.labels(result=result, status_code=str(status_code) if status_code else "none").inc()


class TaskQueueCollector:
    """The task queue as the database has it now, read at each scrape."""

    def collect(self):
        from messaging_project.api.worker import ready_queue  # the worker imports much

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
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = prometheus_client.REGISTRY
    queue = CollectorRegistry(auto_describe=False)
    queue.register(TaskQueueCollector())
    return prometheus_client.generate_latest(registry) + prometheus_client.generate_latest(queue)


@require_GET
def metrics_view(request):
    expected = settings.METRICS_TOKEN
    if not expected:
        return JsonResponse({"statusCode": 404, "message": "Not found."}, status=404)
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), expected.encode()
    ):
        response = JsonResponse({"statusCode": 401, "message": "Unauthorized."}, status=401)
        response["WWW-Authenticate"] = "Bearer"
        return response
    response = HttpResponse(exposition(), content_type=prometheus_client.CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
