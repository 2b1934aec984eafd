"""The task backend: django_tasks_db's, which stores each task as a row of our database.

`task.enqueue()` inserts the row on the caller's connection, so inside
`transaction.atomic()` the task commits or rolls back with the data that caused it: a
crash can delay the work but never lose it, and a rolled-back request leaves no task.
(django_tasks_db has no `enqueue_on_commit`; enqueueing after the commit would reopen
the gap between the commit and the enqueue.)

On PostgreSQL the enqueue also sends a NOTIFY, which PostgreSQL delivers when the
transaction commits (never for a rollback): idle workers wake at once instead of at
their next poll. SQLite has no such thing; its workers poll.
"""

from django.db import connections, router
from django_tasks_db import DatabaseBackend as StoredTasksBackend

CHANNEL = "messaging_tasks"


class DatabaseBackend(StoredTasksBackend):
    def enqueue(self, task, args, kwargs):
        # Imported here: a backend may be built while the apps are still loading.
        from django_tasks_db.models import DBTaskResult

        result = super().enqueue(task, args, kwargs)
        connection = connections[router.db_for_write(DBTaskResult)]
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_notify(%s, '')", [CHANNEL])
        return result
