from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WorkerConfig(AppConfig):
    """The task runtime: the worker process (`db_worker`), its heartbeats and recovery,
    the periodic schedule, retries and clean-ups, `tasks_status` and the task admin.
    It imports no app: apps hand it their own queues (`register_queue`)."""

    name = "messaging_project.worker"
    label = "worker"
    verbose_name = _("Background tasks")

    def ready(self) -> None:
        from messaging_project.worker import checks  # noqa: F401  (registers the system checks)
