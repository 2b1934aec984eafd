from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BusinessNumbersConfig(AppConfig):
    name = "business_numbers"
    verbose_name = _("WhatsApp numbers")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from business_numbers.api import schema  # noqa: F401
