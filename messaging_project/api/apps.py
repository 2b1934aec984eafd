from django.apps import AppConfig


class BaseConfig(AppConfig):
    """The base layer as a Django app, for the models it owns (idempotency keys).

    Labelled `base` rather than `api`: its tables are named `base_*`, and it imports
    no app (import-linter checks that in `make lint`).
    """

    name = "messaging_project.api"
    label = "base"
    verbose_name = "Base"

    def ready(self) -> None:
        from django.contrib.admin.models import LogEntry
        from django.db.models.signals import post_save

        from messaging_project.api import checks  # noqa: F401  (registers the system checks)
        from messaging_project.api.request_log import log_admin_entry

        # Logging only, no business logic: the admin's history with the client address.
        post_save.connect(log_admin_entry, sender=LogEntry, dispatch_uid="admin-audit-log")
