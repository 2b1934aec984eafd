"""The service's own Prometheus counters: what it does, as opposed to the requests and
database queries django-prometheus counts. Every counter is defined here, in the core,
so that any app can increment one without importing another; `GET /metrics`
(messaging_project/api/metrics.py) exposes them.

gunicorn runs several worker processes, and the task worker runs beside them: with
PROMETHEUS_MULTIPROC_DIR set (a directory every process of the machine shares, never
emptied while one runs), prometheus_client's multiprocess mode adds their counts up, so
a scrape that lands on any one gunicorn worker sees them all. Without it each process
counts alone (docs/operations.md).
"""

import os

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, multiprocess

SENDS = Counter(
    "whatsapp_sends",
    "Messages handed to the channel, by result (accepted, refused, credentials, "
    "unavailable, timeout, failed) and the channel's HTTP status ('none': no answer).",
    ["result", "status_code"],
)
INBOUND_MESSAGES = Counter(
    "whatsapp_inbound_messages",
    "Inbound messages recorded (WhatsApp's webhook, simulate_inbound), redeliveries not counted.",
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


def counters() -> bytes:
    """Every process's counts (this process's alone without PROMETHEUS_MULTIPROC_DIR),
    in Prometheus' text format."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = prometheus_client.REGISTRY
    return prometheus_client.generate_latest(registry)
