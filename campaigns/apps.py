from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CampaignsConfig(AppConfig):
    name = "campaigns"
    verbose_name = _("Campaigns")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from business_numbers.services import guard_deletion
        from campaigns.api import schema  # noqa: F401
        from campaigns.services import number_in_use
        from campaigns.settlement import on_chat_statuses, on_kept_statuses
        from sending.recorded import StatusesKept, StatusesRecorded, listen

        # A number a campaign still sends from is not deleted.
        guard_deletion(number_in_use)
        # Statuses of sends whose outcome is unknown settle their recipients.
        listen(StatusesKept, on_kept_statuses)
        listen(StatusesRecorded, on_chat_statuses)
