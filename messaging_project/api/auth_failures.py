"""The per-address limit on failed authentications, against token guessing.

Every failed bearer authentication counts against the client's address in a fixed
one-minute window, in the shared cache, with the rate limiter's atomic add-then-incr.
Once an address has API_AUTH_FAILURE_LIMIT failures in the window, every request with
a bearer token from it gets `429 Too Many Attempts.` until the window ends, even with
a valid token: a guess that happens to be right then tells the guesser nothing.

A failure is counted first and decided on by the count the increment returns, so that
parallel guesses cannot all pass a check made before any of them was counted: of a
burst, exactly the limit get their 401.

The address is messaging_project.core.client_address: REMOTE_ADDR, or behind the
reverse proxies named in TRUSTED_PROXIES the client's address they forward. Without that
setting behind a proxy, every client would share the proxy's budget (docs/operations.md).
"""

import time

from django.conf import settings
from django.core.cache import cache

from messaging_project.api.throttling import WINDOW_SECONDS, count_hit


def window_key(address: str, now: float) -> tuple[str, int]:
    """The window's counter key and the seconds left in the window."""
    window = int(now // WINDOW_SECONDS)
    seconds_left = max(1, int((window + 1) * WINDOW_SECONDS - now))
    return f"authfail:{address}:{window}", seconds_left


def blocked_for(address: str, now: float | None = None) -> int | None:
    """Seconds until the address may try again, or None when it is not blocked."""
    limit = settings.API_AUTH_FAILURE_LIMIT
    if not limit:
        return None
    key, seconds_left = window_key(address, time.time() if now is None else now)
    return seconds_left if (cache.get(key) or 0) >= limit else None


def record_failure(address: str, now: float | None = None) -> int | None:
    """Count one failure; seconds until the address may try again when it is one too
    many, else None."""
    limit = settings.API_AUTH_FAILURE_LIMIT
    if not limit:
        return None
    key, seconds_left = window_key(address, time.time() if now is None else now)
    return seconds_left if count_hit(key) > limit else None
