"""Idempotency keys: a client that retries blindly never creates or sends twice.

A POST carrying `Idempotency-Key` claims the key for the organization before it runs:

- first time: the request runs; its outcome is stored and the key is kept 24 hours;
- same key, same body, finished: the stored response is replayed, marked with
  `Idempotent-Replayed: true`; nothing runs again (no second WhatsApp message);
- same key, same body, still running: 409;
- same key, another body: 422;
- an outcome that changed nothing is not kept, so the key can be used again: a
  validation failure (400) or our own failure (500, 503). Number failures (422, 502,
  504) are kept: the attempt was made and recorded, and a blind retry must not make
  a second one;
- but once the request may have reached the channel (`point_of_no_return()`), our own
  failure no longer means that nothing happened: the message may be on its way and
  its record lost. The key then stays claimed, unfinished, so every retry gets the
  409 until the key expires, and none sends again.

The claim is committed before the request runs (no transaction is open around a
view), so a retry on another worker sees it even if this one dies mid-request.
"""

import hashlib
import logging
from contextvars import ContextVar
from datetime import timedelta
from functools import wraps

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from messaging_project.api.exceptions import UNAVAILABLE_ERRORS, ApiError
from messaging_project.api.models import IdempotencyKey
from messaging_project.core.database import reconnecting

logger = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
LIFETIME = timedelta(hours=24)
NOT_KEPT = {400, 500, 503}

# Whether the request in this thread may have acted outside the service (see above).
irreversible: ContextVar[bool] = ContextVar("idempotency_irreversible", default=False)


def point_of_no_return() -> None:
    """Say that the current request is about to act where it cannot be undone (a send to
    WhatsApp): from now on, its Idempotency-Key is never released."""
    irreversible.set(True)


def fingerprint(request) -> str:
    digest = hashlib.sha256()
    for part in (request.method.encode(), request.path.encode(), request._request.body):
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()


def read_key(request) -> str | None:
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not (1 <= len(key) <= 255 and key.isascii() and key.isprintable()):
        raise ValidationError({HEADER: ["The key must be 1 to 255 printable ASCII characters."]})
    return key


def claim(organization, key: str, request_fingerprint: str) -> IdempotencyKey | Response:
    """Our claim on the key, or the response to give instead of running the request."""
    for _ in range(2):
        try:
            with transaction.atomic():
                return IdempotencyKey.objects.create(
                    organization=organization, key=key, fingerprint=request_fingerprint
                )
        except IntegrityError:
            pass
        existing = IdempotencyKey.objects.filter(organization=organization, key=key).first()
        if existing is None:  # released meanwhile: try again
            continue
        if existing.created_at < timezone.now() - LIFETIME:
            existing.delete()
            continue
        if existing.fingerprint != request_fingerprint:
            raise ApiError(422, "This Idempotency-Key was already used with a different request.")
        if not existing.completed:
            raise ApiError(409, "A request with this Idempotency-Key is still in progress.")
        response = Response(existing.response_body, status=existing.response_status)
        response[REPLAYED_HEADER] = "true"
        return response
    raise ApiError(409, "A request with this Idempotency-Key is still in progress.")


def settle(record: IdempotencyKey, response: Response) -> None:
    """Keep the outcome for replay, or release the key; repeatable (see `reconnecting`)."""
    if response.status_code in NOT_KEPT:
        if not irreversible.get():
            IdempotencyKey.objects.filter(pk=record.pk).delete()
        # Else the outcome is unknown: the claim stays, so no retry runs the request again.
        return
    record.completed = True
    record.response_status = response.status_code
    record.response_body = response.data
    record.save(update_fields=["completed", "response_status", "response_body"])


def idempotent(handler):
    """For a view's POST handler: honour `Idempotency-Key` as described above."""

    @wraps(handler)
    def wrapper(view, request, *args, **kwargs):
        key = read_key(request)
        if key is None:
            return handler(view, request, *args, **kwargs)
        outcome = claim(view.organization, key, fingerprint(request))
        if isinstance(outcome, Response):
            return outcome
        reset = irreversible.set(False)
        try:
            try:
                response = handler(view, request, *args, **kwargs)
            except Exception as exc:
                response = view.handle_exception(exc)  # the same error response as without a key
            try:
                reconnecting(lambda: settle(outcome, response))
            except UNAVAILABLE_ERRORS as error:
                # The claim stays: a retry gets a 409, never a second run. The client
                # still gets this request's own answer.
                logger.error(
                    "Idempotency-Key %r of organization %s not settled: %s",
                    key,
                    view.organization.pk,
                    error,
                )
        finally:
            irreversible.reset(reset)
        return response

    return wrapper
