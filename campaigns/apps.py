from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CampaignsConfig(AppConfig):
    name = "campaigns"
    verbose_name = _("Campaigns")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from campaigns.api import schema  # noqa: F401
