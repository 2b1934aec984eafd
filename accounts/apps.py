from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Organizations and API tokens")

    def ready(self):
        from django.contrib.auth.signals import user_logged_in

        from accounts.languages import restore_on_login

        # Django's one hook for "a user just logged in": the admin language they chose.
        user_logged_in.connect(restore_on_login, dispatch_uid="accounts.restore_language")
