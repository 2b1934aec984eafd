from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The plumbing every layer uses, as a Django app for its system checks, its command
    (`rotate_encryption_key`) and the admin's audit log. It has no models and imports
    no other layer (import-linter checks that in `make lint`)."""

    name = "messaging_project.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from django.contrib.admin.models import LogEntry
        from django.db.backends.signals import connection_created
        from django.db.models.signals import post_save

        from messaging_project.core import checks  # noqa: F401  (registers the system checks)
        from messaging_project.core.database import load_timestamps_in_c
        from messaging_project.core.request_log import log_admin_entry

        # Logging only, no business logic: the admin's history with the client address.
        post_save.connect(log_admin_entry, sender=LogEntry, dispatch_uid="admin-audit-log")
        connection_created.connect(load_timestamps_in_c, dispatch_uid="timestamps-in-c")
