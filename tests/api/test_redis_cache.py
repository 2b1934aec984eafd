"""The production cache against the machine's real Redis: the rate limiter's one-trip
window counter and the client kept per pool."""

import pytest
from django.core.cache import caches

from devtools.loopback import reachable
from tests.api.test_rate_limit import hits_from_threads

pytestmark = pytest.mark.skipif(not reachable(6379), reason="no Redis on 127.0.0.1:6379")

REDIS_URL = "redis://127.0.0.1:6379/14"


@pytest.fixture
def redis_cache(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "messaging_project.core.cache.SharedRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "test",
        }
    }
    cache = caches["default"]
    cache.clear()
    yield cache
    cache.clear()


def raw_redis():
    import redis

    return redis.Redis.from_url(REDIS_URL)


def test_the_window_counter_counts_and_expires_from_the_first_hit(redis_cache):
    assert [redis_cache.count_in_window("window", 65) for _ in range(3)] == [1, 2, 3]
    stored = redis_cache.make_and_validate_key("window")
    assert stored.startswith("test:")  # the cache's prefix and version apply
    assert 60 < raw_redis().ttl(stored) <= 65
    assert redis_cache.get("window") == 3


def test_a_counter_left_without_expiry_is_still_counted(redis_cache):
    redis_cache.set("window", 7, timeout=None)
    assert redis_cache.count_in_window("window", 65) == 8


def test_the_rate_limiter_counts_exactly_under_concurrent_hits(redis_cache):
    assert sorted(hits_from_threads("ratelimit:burst")) == list(range(1, 201))


def test_one_client_serves_every_call(redis_cache):
    client = redis_cache._cache
    assert client.get_client(write=True) is client.get_client(write=True)
    assert client.get_client() is client.get_client(write=True)  # one server, one pool


def test_the_other_cache_operations_still_work(redis_cache):
    assert redis_cache.add("k", {"a": 1}, timeout=30)
    assert not redis_cache.add("k", "other", timeout=30)
    assert redis_cache.get("k") == {"a": 1}
    redis_cache.set("n", 1)
    assert redis_cache.incr("n") == 2
    assert redis_cache.delete("k")
    assert redis_cache.get("k") is None
