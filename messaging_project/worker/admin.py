"""The background tasks in the admin: for superusers only, as registered here.

A task's arguments and traceback may name any organization's records, and the worker
imports no app, so it knows neither staff nor roles: this page is superusers' alone,
whatever permissions staff were given. accounts, which knows staff and roles,
registers it again for managers too, each seeing their organization's tasks
(accounts/admin.py, `OrganizationTaskAdmin`). Read-only, like django_tasks_db's own
page, which this one replaces: it adds how many times each task was taken (more than
once when a worker died under it) and its error.
"""

import django_tasks_db.admin  # noqa: F401 - registers the page this one replaces
from django.contrib import admin
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, pgettext_lazy
from django_tasks_db.models import DBTaskResult

admin.site.unregister(DBTaskResult)
# The section of the admin's index the page is in: django_tasks_db's app, whose name
# ("Tasks Database Backend") is neither marked for translation nor what staff call it.
DBTaskResult._meta.app_config.verbose_name = _("Background tasks")

# django_tasks_db and django_tasks mark these strings of the task page but ship no
# translations: they are listed here so that our catalog (locale/) carries them.
THEIR_STRINGS = [
    gettext_noop("status"),
    gettext_noop("enqueued at"),
    gettext_noop("started at"),
    gettext_noop("finished at"),
    gettext_noop("args kwargs"),
    gettext_noop("priority"),
    gettext_noop("task path"),
    gettext_noop("worker id"),
    gettext_noop("queue name"),
    gettext_noop("backend name"),
    gettext_noop("run after"),
    gettext_noop("return value"),
    gettext_noop("exception class path"),
    gettext_noop("traceback"),
    gettext_noop("Task Result"),
    gettext_noop("Task Results"),
    pgettext_lazy("Task", "Ready"),
    pgettext_lazy("Task", "Running"),
    pgettext_lazy("Task", "Failed"),
    pgettext_lazy("Task", "Successful"),
]


@admin.register(DBTaskResult)
class TaskAdmin(django_tasks_db.admin.DBTaskResultAdmin):
    # mypy takes django_tasks_db's tuples for fixed-length types; any sequence will do.
    list_display = (  # type: ignore[assignment]
        "task_name",
        "status",
        "attempts",
        "last_error",
        "enqueued_at",
        "started_at",
        "finished_at",
    )
    list_filter = ("status", "queue_name")  # type: ignore[assignment]
    show_full_result_count = False  # the table can be large: one count query, not two

    def get_readonly_fields(self, request, obj=None):
        # The base's page, with the two columns it names in plain English translated.
        fields = super().get_readonly_fields(request, obj)
        renamed = {
            "id": "task_id",
            "formatted_traceback": "traceback_text",
            "display_run_after": "run_after_text",
        }
        return [renamed.get(name, name) for name in fields]

    @admin.display(description=_("ID"))
    def task_id(self, obj: DBTaskResult):
        return obj.id

    @admin.display(description=_("task name"))
    def task_name(self, obj: DBTaskResult) -> str:
        return obj.task_name

    @admin.display(description=_("traceback"))
    def traceback_text(self, obj: DBTaskResult) -> str:
        return self.formatted_traceback(obj)

    @admin.display(description=_("run after"))
    def run_after_text(self, obj: DBTaskResult):
        return self.display_run_after(obj)

    @staticmethod
    def is_superuser(request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_module_permission(self, request) -> bool:
        return self.is_superuser(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self.is_superuser(request)

    @admin.display(description=_("attempts"))
    def attempts(self, obj: DBTaskResult) -> int:
        """Runs started: the first, plus one for each time a worker died under it."""
        return len(obj.worker_ids)

    @admin.display(description=_("last error"))
    def last_error(self, obj: DBTaskResult) -> str:
        if not obj.traceback:
            return "-"
        last_line = obj.traceback.strip().splitlines()[-1]
        return format_html("<code>{}</code>", last_line[:200])
