"""The background tasks in the admin: for superusers only.

A task's arguments and traceback may name any organization's records, so staff
members, who are scoped to one organization, never see this page, whatever
permissions they were given. Read-only, like django_tasks_db's own page, which this
one replaces: it adds how many times each task was taken (more than once when a
worker died under it) and its error.
"""

import django_tasks_db.admin  # noqa: F401 - registers the page this one replaces
from django.contrib import admin
from django.utils.html import format_html
from django_tasks_db.models import DBTaskResult

admin.site.unregister(DBTaskResult)


@admin.register(DBTaskResult)
class TaskAdmin(django_tasks_db.admin.DBTaskResultAdmin):
    list_display = (
        "task_name",
        "status",
        "attempts",
        "last_error",
        "enqueued_at",
        "started_at",
        "finished_at",
    )
    list_filter = ("status", "queue_name")
    show_full_result_count = False  # the table can be large: one count query, not two

    @staticmethod
    def is_superuser(request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_module_permission(self, request) -> bool:
        return self.is_superuser(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self.is_superuser(request)

    @admin.display(description="attempts")
    def attempts(self, obj: DBTaskResult) -> int:
        """Runs started: the first, plus one for each time a worker died under it."""
        return len(obj.worker_ids)

    @admin.display(description="last error")
    def last_error(self, obj: DBTaskResult) -> str:
        if not obj.traceback:
            return "-"
        last_line = obj.traceback.strip().splitlines()[-1]
        return format_html("<code>{}</code>", last_line[:200])
