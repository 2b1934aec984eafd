from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CannedRepliesConfig(AppConfig):
    name = "canned_replies"
    verbose_name = _("Canned replies")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from canned_replies.api import schema  # noqa: F401
