"""Idempotency keys: a client that retries blindly never creates or sends twice.

A POST carrying `Idempotency-Key` claims the key for the organization before it runs:

- first time: the request runs; its outcome is stored and the key is kept 24 hours;
- same key, same body, finished: the stored response is replayed, marked with
  `Idempotent-Replayed: true`; nothing runs again (no second WhatsApp message);
- same key, same body, still running: 409;
- same key, another body: 422;
- an outcome that changed nothing is not kept, so the key can be used again: a
  validation failure (400) or our own failure (500, 503). Channel failures (422, 502,
  504) are kept: the attempt was made and recorded, and a blind retry must not make
  a second one.
"""

import hashlib
from datetime import timedelta
from functools import wraps

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from messaging_project.api.exceptions import ApiError
from messaging_project.api.models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
LIFETIME = timedelta(hours=24)
NOT_KEPT = {400, 500, 503}


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
    if response.status_code in NOT_KEPT:
        record.delete()
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
        try:
            response = handler(view, request, *args, **kwargs)
        except Exception as exc:
            response = view.handle_exception(exc)  # the same error response as without a key
        settle(outcome, response)
        return response

    return wrapper
