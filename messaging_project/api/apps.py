from django.apps import AppConfig


class ApiConfig(AppConfig):
    """HTTP conventions every app's API builds on, as a Django app for the model it owns
    (idempotency keys) and its clean-up task.

    Labelled `base`: it held the whole base layer once, its tables are named `base_*`,
    and existing databases record its migrations under that label.
    """

    name = "messaging_project.api"
    label = "base"
    verbose_name = "API"
