from django.apps import AppConfig


class ContactsConfig(AppConfig):
    name = "contacts"

    def ready(self):
        # Registers the app's OpenAPI description with drf-spectacular (see that module).
        from contacts.api import schema  # noqa: F401
