"""The database cache, with an increment that is atomic across processes.

Django's DatabaseCache.incr() reads, adds and writes back, so two gunicorn workers
can both read 41 and both write 42. The rate limiter needs a true counter: here the
row is locked (SELECT ... FOR UPDATE on PostgreSQL; on SQLite the IMMEDIATE
transaction mode set in settings takes the write lock) for the read and the write.
"""

from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router, transaction


class AtomicDatabaseCache(DatabaseCache):
    def incr(self, key, delta=1, version=None):
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        table = connection.ops.quote_name(self._table)
        cache_key = self.make_and_validate_key(key, version=version)
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        with transaction.atomic(using=db):
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT cache_key FROM {table} WHERE cache_key = %s{lock}", [cache_key]
                )
            return super().incr(key, delta, version)
