from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = _("Analytics")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from analytics.api import schema  # noqa: F401
        from analytics.services import on_conversations_changed, on_messages_in, on_messages_out
        from sending.recorded import ConversationsChanged, MessagesIn, MessagesOut, listen

        # The figures move in the transaction of the messages they count; a status's, by
        # the chat it moves (analytics/folding.py).
        listen(MessagesIn, on_messages_in)
        listen(MessagesOut, on_messages_out)
        listen(ConversationsChanged, on_conversations_changed)
