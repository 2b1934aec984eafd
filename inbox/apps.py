from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboxConfig(AppConfig):
    name = "inbox"
    verbose_name = _("Inbox")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from inbox.api import schema  # noqa: F401
        from inbox.services import on_conversations_changed
        from sending.recorded import ConversationsChanged, listen

        # conversation.created and a reopening's conversation.updated, and the count of
        # conversations, in the transaction of the chats that caused them.
        listen(ConversationsChanged, on_conversations_changed)
