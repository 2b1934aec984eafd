from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = _("Event webhooks")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from events.api import schema  # noqa: F401
        from events.delivery import DeliveryQueue
        from messaging_project.worker.queues import register_queue

        # The workers drain the deliveries (the worker imports no app: the app registers).
        register_queue(DeliveryQueue())
