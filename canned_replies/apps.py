from django.apps import AppConfig


class CannedRepliesConfig(AppConfig):
    name = "canned_replies"
    verbose_name = "Canned replies"
