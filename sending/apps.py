from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SendingConfig(AppConfig):
    name = "sending"
    verbose_name = _("Sending")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from sending.api import schema  # noqa: F401
