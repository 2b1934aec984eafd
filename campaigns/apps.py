from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from campaigns.api import schema  # noqa: F401
