"""The one place where an error becomes a response.

Every error under /api/ and /webhooks/ is `{"statusCode": N, "message": "..."}`,
plus `errors` (dotted field paths) for validation failures and whatever extra
fields an ApiError carries (for example `channel_error`). A database that cannot be
reached is a 503 with `Retry-After`, not a 500: the client's retry will work.
"""

import logging
from math import ceil
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import connections
from django.http import Http404, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.settings import api_settings
from rest_framework.views import set_rollback

from messaging_project.api.parsers import MALFORMED_BODY, MalformedForm
from messaging_project.core.database import UNAVAILABLE_ERRORS

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

logger = logging.getLogger("messaging_project.api")

MISSING_TOKEN = "Unauthorized. Bearer Token is missing."
INVALID_TOKEN = "Unauthorized. Invalid Bearer Token."
INVALID_DATA = "The given data was invalid."
NOT_FOUND = "Not found."
TOO_MANY_ATTEMPTS = "Too Many Attempts."
SERVER_ERROR = "Server Error"
UNAVAILABLE = "The service is temporarily unavailable. Please retry."
UNAVAILABLE_RETRY_AFTER = 2  # seconds: a reconnect, a failover or a lock wait is short


class PageParameterError(exceptions.ValidationError):
    """A bad `page` or `per_page`: a 400 whose body also carries the errors as `error`,
    as the original product answers them."""


class ApiError(exceptions.APIException):
    """An error with its own status, message and extra body fields."""

    def __init__(self, status: int, message: "StrOrPromise", **extra: Any) -> None:
        super().__init__(message)
        self.status_code = status
        self.extra = extra


def error_body(status: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"statusCode": status, "message": message, **extra}


def flatten_errors(detail: Any, path: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail as `{"a.0.b": ["message"]}`."""
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for key, value in detail.items():
            flat.update(flatten_errors(value, f"{path}.{key}" if path else str(key)))
        return flat
    if isinstance(detail, list):
        flat = {}
        for index, item in enumerate(detail):
            if isinstance(item, dict | list):
                flat.update(flatten_errors(item, f"{path}.{index}" if path else str(index)))
            else:
                flat.setdefault(path or api_settings.NON_FIELD_ERRORS_KEY, []).append(str(item))
        return flat
    return {path or api_settings.NON_FIELD_ERRORS_KEY: [str(detail)]}


def describe(exc: exceptions.APIException) -> tuple[str, dict[str, Any]]:
    """The message and extra body fields for a DRF exception."""
    if isinstance(exc, PageParameterError):
        errors = flatten_errors(exc.detail)
        return INVALID_DATA, {"errors": errors, "error": errors}
    if isinstance(exc, exceptions.ValidationError):
        return INVALID_DATA, {"errors": flatten_errors(exc.detail)}
    if isinstance(exc, ApiError):
        return str(exc.detail), exc.extra
    # Clients of the original product read a 401's text from `error`.
    if isinstance(exc, exceptions.NotAuthenticated):
        return MISSING_TOKEN, {"error": MISSING_TOKEN}
    if isinstance(exc, exceptions.AuthenticationFailed):
        return INVALID_TOKEN, {"error": INVALID_TOKEN}
    if isinstance(exc, MalformedForm):
        return str(exc.detail), {}
    messages = {
        exceptions.ParseError: MALFORMED_BODY,
        exceptions.NotFound: NOT_FOUND,
        exceptions.Throttled: TOO_MANY_ATTEMPTS,
    }
    for exc_type, message in messages.items():
        if isinstance(exc, exc_type):
            return message, {}
    return str(exc.detail), {}


def discard_broken_connections() -> None:
    """Close connections that failed and no longer answer, so the next request reconnects.

    The WSGI server's end-of-request hook does the same; doing it here covers callers
    that bypass it (the test client) and answers the 503 only once the pool is clean.
    A connection inside an atomic block is left to it: closing it there breaks the block.
    """
    for connection in connections.all(initialized_only=True):
        if (
            connection.connection is not None
            and connection.errors_occurred
            and not connection.in_atomic_block
            and not connection.is_usable()
        ):
            connection.close()


def database_unavailable(exc: Exception) -> tuple[dict[str, Any], dict[str, str]]:
    """The 503's body and headers for a database that went away, once it is logged and
    the broken connection dropped."""
    logger.warning("Database unavailable: %s: %s", type(exc).__name__, exc)
    discard_broken_connections()
    return error_body(503, UNAVAILABLE), {"Retry-After": str(UNAVAILABLE_RETRY_AFTER)}


def unavailable_json(exc: Exception) -> JsonResponse:
    """The same 503 for plain Django views (the webhook), through handler500."""
    body, headers = database_unavailable(exc)
    return JsonResponse(body, status=503, headers=headers)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(as_serializer_error(exc))

    set_rollback()
    if isinstance(exc, UNAVAILABLE_ERRORS):
        body, headers = database_unavailable(exc)
        return Response(body, 503, headers=headers)
    if not isinstance(exc, exceptions.APIException):
        view = context.get("view")
        logger.exception("Unexpected error in %s", type(view).__name__, exc_info=exc)
        return Response(error_body(500, SERVER_ERROR), status=500)

    headers = {}
    auth_header = getattr(exc, "auth_header", None)  # set by DRF's views on a 401
    if auth_header:
        headers["WWW-Authenticate"] = auth_header
    # Throttled.wait is missing from djangorestframework-stubs.
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:  # type: ignore[attr-defined]
        headers["Retry-After"] = str(ceil(exc.wait))  # type: ignore[attr-defined]
    message, extra = describe(exc)
    return Response(error_body(exc.status_code, message, **extra), exc.status_code, headers=headers)
