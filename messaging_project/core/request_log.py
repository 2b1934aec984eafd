"""The logs: one line per request, the request's id on every line logged while it runs,
human lines by default and one JSON object per line with LOG_FORMAT=json.

The request line carries the request id (the client's X-Request-ID when it is a sane
one, else a new one; answered in X-Request-ID), the client address (client_address:
behind TRUSTED_PROXIES, the forwarded one), the organization id once the token named it,
the method, the path (never the query string, where the webhook's verify token travels),
the status and the duration. Texts that look like a bearer token, an API token or a
verify token are masked in every line, whatever logged them.

The admin's log entries (Django's LogEntry, the history of each record) are also logged
here with the address they came from, which Django's table has no column for.
"""

import contextvars
import json
import logging
import re
import time
import uuid
from datetime import UTC, datetime

from messaging_project.core.client_address import client_address

logger = logging.getLogger("messaging.requests")
admin_logger = logging.getLogger("messaging.admin")
# LogEntry's action flags, in the logs' language whatever the admin's (its own labels
# are translated).
ADMIN_ACTIONS = {1: "addition", 2: "change", 3: "deletion"}

# What is known about the request being served on this thread: request_id, client.
current: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "request_context", default=None
)

REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
FIELDS = ("request_id", "organization_id", "client", "method", "path", "status", "duration_ms")
SECRETS = [
    (re.compile(r"(?i)\b(bearer\s+)[^\s,;\"']+"), r"\1[redacted]"),
    (re.compile(r"\b(wam_[0-9a-f]{12}_)\S+"), r"\1[redacted]"),
    (
        re.compile(
            r"(?i)\b((?:hub\.verify_token|access_token|app_secret|secret)[=:]\s*)[^\s&,;\"']+"
        ),
        r"\1[redacted]",
    ),
]


def redact(text: str) -> str:
    for pattern, replacement in SECRETS:
        text = pattern.sub(replacement, text)
    return text


def organization_id(request):
    user = getattr(request, "user", None)  # DRF puts the ApiClient here
    organization = getattr(user, "organization", None)
    return getattr(organization, "pk", None) or getattr(request, "organization_id", None)


class RequestLogMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if REQUEST_ID.match(given) else uuid.uuid4().hex
        request.request_id = request_id
        context = {"request_id": request_id, "client": client_address(request)}
        token = current.set(context)
        started = time.monotonic()
        try:
            response = self.get_response(request)
            duration_ms = round((time.monotonic() - started) * 1000, 1)
            response["X-Request-ID"] = request_id
            logger.log(
                logging.WARNING if response.status_code >= 500 else logging.INFO,
                "%s %s %s %.1f ms",
                request.method,
                request.path,
                response.status_code,
                duration_ms,
                extra={
                    "organization_id": organization_id(request),
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": duration_ms,
                },
            )
            return response
        finally:
            current.reset(token)


class RequestContextFilter(logging.Filter):
    """Puts the current request's id and client on every record (`-` outside requests)."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = current.get() or {}
        for name in ("request_id", "client"):
            if not hasattr(record, name):
                setattr(record, name, context.get(name, "-"))
        return True


class PlainFormatter(logging.Formatter):
    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the request fields
    the record has."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None and value != "-":
                entry[name] = value
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry, default=str)


def log_admin_entry(sender, instance, created, **kwargs):
    """Each admin change, with the address it came from (LogEntry has no column for it)."""
    if not created:
        return
    context = current.get() or {}
    admin_logger.info(
        "Admin %s of %s %r by user %s from %s",
        ADMIN_ACTIONS.get(instance.action_flag, str(instance.action_flag)),
        instance.content_type.model if instance.content_type_id else "record",
        instance.object_repr,
        instance.user_id,
        context.get("client", "-"),
        extra={"admin_user_id": instance.user_id},
    )
