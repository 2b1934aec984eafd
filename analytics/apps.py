from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = _("Analytics")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from analytics.api import schema  # noqa: F401
        from analytics.services import (
            on_conversations_changed,
            on_messages_in,
            on_messages_out,
            on_statuses_moved,
            on_statuses_recorded,
        )
        from sending.recorded import (
            ConversationsChanged,
            MessagesIn,
            MessagesOut,
            StatusesMoved,
            StatusesRecorded,
            listen,
        )

        # The figures move in the transaction of the messages and statuses they count.
        listen(MessagesIn, on_messages_in)
        listen(MessagesOut, on_messages_out)
        listen(StatusesMoved, on_statuses_moved)
        listen(StatusesRecorded, on_statuses_recorded)
        listen(ConversationsChanged, on_conversations_changed)
