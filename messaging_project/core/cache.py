"""The shared caches: the database cache with an increment that is atomic across
processes, and Redis with one client per pool and a one-round-trip window counter.

Django's DatabaseCache.incr() reads, adds and writes back, so two gunicorn workers
can both read 41 and both write 42. The rate limiter needs a true counter: here the
row is locked (SELECT ... FOR UPDATE on PostgreSQL; on SQLite the IMMEDIATE
transaction mode set in settings takes the write lock) for the read and the write.
"""

import threading
from typing import cast

from django.core.cache.backends.db import DatabaseCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.db import connections, router, transaction
from django.utils.functional import cached_property

from messaging_project.core.queries import lock_cache_row


class AtomicDatabaseCache(DatabaseCache):
    def incr(self, key, delta=1, version=None):
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        cache_key = self.make_and_validate_key(key, version=version)
        with transaction.atomic(using=db):
            lock_cache_row(connection, self._table, cache_key)
            return super().incr(key, delta, version)


# INCR, and on the window's first hit set its expiry: one round trip, atomic in Redis.
# Django's add() then incr() takes three (SET NX, EXISTS, INCR).
COUNT_IN_WINDOW_LUA = """
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return hits
"""


class ReusedClientRedisCacheClient(RedisCacheClient):
    """Django's Redis client builds a new redis.Redis object on every call; the object
    is only a handle on the pool (thread-safe), so one per pool serves every thread."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}
        self._lock = threading.Lock()

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            with self._lock:
                client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client

    @cached_property
    def _count_script(self):
        return self.get_client(write=True).register_script(COUNT_IN_WINDOW_LUA)

    def count_in_window(self, key: str, timeout: int) -> int:
        return int(self._count_script(keys=[key], args=[timeout]))


class SharedRedisCache(RedisCache):
    """The production cache: Django's RedisCache with the client above."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient

    def count_in_window(self, key: str, timeout: int, version=None) -> int:
        """Adds one to the counter `key`, which expires `timeout` seconds after its first
        hit, and returns the new count."""
        key = self.make_and_validate_key(key, version=version)
        # __init__ made the client a ReusedClientRedisCacheClient.
        client = cast(ReusedClientRedisCacheClient, self._cache)
        return client.count_in_window(key, timeout)
