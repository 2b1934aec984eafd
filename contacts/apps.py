from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ContactsConfig(AppConfig):
    name = "contacts"
    verbose_name = _("Contacts")

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from contacts.api import schema  # noqa: F401
