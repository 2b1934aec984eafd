from django.apps import AppConfig


class SendingConfig(AppConfig):
    name = "sending"

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from sending.api import schema  # noqa: F401
