"""The admin in the staff member's language; everything else in English.

Under the admin's URL the language is the one the staff member chose in the admin's
header (kept in the session: accounts/languages.py), else Django's LocaleMiddleware
picks it: the language cookie the switch also sets, the browser's `Accept-Language`
among settings.LANGUAGES, else LANGUAGE_CODE. Everywhere else (the
API, the webhooks, the health checks) English is activated for the request, whatever
the header or LANGUAGE_CODE say: the API's messages are its contract, and a thread that
served the admin in Spanish must not answer the next API request in Spanish.
"""

from functools import cache

from django.conf import settings
from django.middleware.locale import LocaleMiddleware
from django.urls import get_script_prefix, reverse
from django.utils import translation

# The language of the API, the webhooks and the logs.
SERVICE_LANGUAGE = "en"
# Where the admin language a staff member chose is kept for their session.
ADMIN_LANGUAGE_SESSION_KEY = "admin_language"


@cache
def admin_path() -> str:
    """The admin's path within the site, as request.path_info has it (reversing it on
    every request cost more than the rest of this middleware)."""
    return "/" + reverse("admin:index").removeprefix(get_script_prefix())


def is_admin(request) -> bool:
    return request.path_info.startswith(admin_path())


class AdminLocaleMiddleware(LocaleMiddleware):
    def process_request(self, request):
        if is_admin(request):
            chosen = request.session.get(ADMIN_LANGUAGE_SESSION_KEY)
            if chosen in dict(settings.LANGUAGES):
                translation.activate(chosen)
                request.LANGUAGE_CODE = translation.get_language()
            else:
                super().process_request(request)
        else:
            translation.activate(SERVICE_LANGUAGE)
            request.LANGUAGE_CODE = SERVICE_LANGUAGE

    def process_response(self, request, response):
        if is_admin(request):
            # Content-Language, and Vary: Accept-Language for caches.
            return super().process_response(request, response)
        return response
