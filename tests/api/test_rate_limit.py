"""The per-organization rate limit: counting down, 429, reset, separate budgets."""

import threading
import time

import pytest
from django.core.cache import caches
from django.db import connection

from messaging_project.api import throttling


@pytest.fixture
def frozen_time(monkeypatch):
    clock = {"now": 1_800_000_000.0}  # the start of a window
    monkeypatch.setattr(throttling.time, "time", lambda: clock["now"])
    return clock


@pytest.mark.django_db
def test_counts_down_then_429_with_retry_after(api, settings, frozen_time):
    settings.API_RATE_LIMIT = 3
    remaining = [api.get("/api/contacts")["X-RateLimit-Remaining"] for _ in range(3)]
    assert remaining == ["2", "1", "0"]
    frozen_time["now"] += 20
    response = api.get("/api/contacts")
    assert response.status_code == 429
    assert response.json() == {"statusCode": 429, "message": "Too Many Attempts."}
    assert response["Retry-After"] == "40"
    assert response["X-RateLimit-Reset"] == str(1_800_000_000 + 60)
    assert response["X-RateLimit-Limit"] == "3"
    assert response["X-RateLimit-Remaining"] == "0"


@pytest.mark.django_db
def test_next_window_resets_the_budget(api, settings, frozen_time):
    settings.API_RATE_LIMIT = 1
    assert api.get("/api/contacts").status_code == 200
    assert api.get("/api/contacts").status_code == 429
    frozen_time["now"] += 60
    response = api.get("/api/contacts")
    assert response.status_code == 200
    assert response["X-RateLimit-Remaining"] == "0"


@pytest.mark.django_db
def test_organizations_do_not_share_a_budget(api, api_b, settings, frozen_time):
    settings.API_RATE_LIMIT = 2
    api.get("/api/contacts")
    api.get("/api/contacts")
    assert api.get("/api/contacts").status_code == 429
    assert api_b.get("/api/contacts").status_code == 200


@pytest.mark.django_db
def test_an_organization_may_have_its_own_limit(api, org_a, frozen_time):
    org_a.rate_limit = 1
    org_a.save()
    assert api.get("/api/contacts")["X-RateLimit-Limit"] == "1"
    assert api.get("/api/contacts").status_code == 429


@pytest.mark.django_db
def test_unauthenticated_requests_do_not_spend_the_budget(api, settings, frozen_time):
    from rest_framework.test import APIClient

    settings.API_RATE_LIMIT = 1
    for _ in range(3):
        assert APIClient().get("/api/contacts").status_code == 401
    assert api.get("/api/contacts").status_code == 200


@pytest.mark.django_db
def test_database_cache_increments_exactly(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "messaging_project.core.cache.AtomicDatabaseCache",
            "LOCATION": "django_cache",
        }
    }
    cache = caches["default"]
    cache.add("k", 0)
    assert [cache.incr("k") for _ in range(3)] == [1, 2, 3]
    with pytest.raises(ValueError):
        cache.incr("missing")


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent connections")
def test_database_cache_is_exact_under_concurrent_increments(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "messaging_project.core.cache.AtomicDatabaseCache",
            "LOCATION": "django_cache",
        }
    }
    assert sorted(hits_from_threads(f"ratelimit:test:{time.time()}")) == list(range(1, 201))


def hits_from_threads(key: str, threads: int = 8, hits_each: int = 25) -> list[int]:
    """The counts `throttling.count_hit` returned to concurrent threads hitting `key`."""
    results: list[int] = []

    def worker():
        from django.db import connections

        try:
            for _ in range(hits_each):
                results.append(throttling.count_hit(key))
        finally:
            connections.close_all()

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    return results
