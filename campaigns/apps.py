from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CampaignsConfig(AppConfig):
    name = "campaigns"
    verbose_name = _("Campaigns")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from campaigns.api import schema  # noqa: F401
        from campaigns.settlement import on_chat_statuses, on_kept_statuses
        from sending.services import listen_for_chat_statuses, listen_for_kept_statuses

        # Statuses of sends whose outcome is unknown settle their recipients.
        listen_for_kept_statuses(on_kept_statuses)
        listen_for_chat_statuses(on_chat_statuses)
