from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SendingConfig(AppConfig):
    name = "sending"
    verbose_name = _("Sending")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from sending.api import schema  # noqa: F401
        from sending.recorded import StatusesKept, listen
        from sending.services.settlement import settle_named_chats

        # Statuses that name an API send or an auto-reply whose outcome is unknown.
        listen(StatusesKept, settle_named_chats)
