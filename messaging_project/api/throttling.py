"""The per-organization rate limit: a fixed one-minute window counted atomically.

Like Laravel: `cache.add(key, 0)` opens the window, `cache.incr(key)` counts the
request. Both are atomic in the shared cache (the database cache with its locked
increment), so concurrent workers never let more than the limit through. Redis does
the same in one round trip (`SharedRedisCache.count_in_window`).
"""

import time
from dataclasses import dataclass
from math import ceil

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from messaging_project.core.metrics import RATE_LIMIT_REFUSALS

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class RateLimitState:
    limit: int
    hits: int
    reset_at: int  # epoch seconds when the window ends

    @property
    def exceeded(self) -> bool:
        return self.hits > self.limit

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.limit - self.hits)),
        }
        if self.exceeded:
            headers["X-RateLimit-Reset"] = str(self.reset_at)
        return headers


def count_hit(key: str) -> int:
    """Add one to the window's counter and return the new count."""
    count_in_window = getattr(cache, "count_in_window", None)
    if count_in_window is not None:
        return count_in_window(key, WINDOW_SECONDS + 5)
    for _ in range(3):
        cache.add(key, 0, timeout=WINDOW_SECONDS + 5)
        try:
            return cache.incr(key)
        except ValueError:  # the key expired between add() and incr()
            continue
    raise RuntimeError(f"The rate limit counter {key} could not be incremented.")


def hit(organization, now: float | None = None) -> RateLimitState:
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    limit = organization.rate_limit or settings.API_RATE_LIMIT
    hits = count_hit(f"ratelimit:{organization.pk}:{window}")
    return RateLimitState(limit=limit, hits=hits, reset_at=(window + 1) * WINDOW_SECONDS)


class OrganizationRateThrottle(BaseThrottle):
    def allow_request(self, request, view) -> bool:
        if request.auth is None:
            return True
        self.state = hit(request.auth.organization)
        # Kept on the Django request so the response middleware adds the headers
        # to every response, errors included.
        request._request.rate_limit = self.state
        if self.state.exceeded:
            RATE_LIMIT_REFUSALS.labels(limit="organization").inc()
            return False
        return True

    def wait(self) -> float:
        return max(1, ceil(self.state.reset_at - time.time()))
