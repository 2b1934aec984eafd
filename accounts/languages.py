"""The admin's language switch (docs/admin.md, "Languages").

The header's form posts to `switch_language`, which is Django's `set_language` (it sets
the language cookie and goes back to the page) and, for a logged-in staff member, also
remembers the choice (`AdminLanguage`) and puts it in the session. At each login the
remembered language is put in the session again (`restore_on_login`), so it follows the
staff member to any browser; the admin's locale middleware
(messaging_project/core/locale.py) reads it there before the cookie and the browser's
`Accept-Language`, at no cost: the admin loads the session anyway.
"""

from django.conf import settings
from django.views.decorators.http import require_POST
from django.views.i18n import set_language

from accounts import services
from messaging_project.core.locale import ADMIN_LANGUAGE_SESSION_KEY


@require_POST
def switch_language(request):
    response = set_language(request)
    language = request.POST.get("language", "")
    user = request.user
    if language in dict(settings.LANGUAGES) and user.is_authenticated and user.is_staff:
        services.set_admin_language(user=user, language=language)
        request.session[ADMIN_LANGUAGE_SESSION_KEY] = language
    return response


def restore_on_login(sender, request, user, **kwargs) -> None:
    """Django's `user_logged_in`: the staff member's remembered language, in the session."""
    if request is None or not hasattr(request, "session"):
        return
    language = services.admin_language(user)
    if language:
        request.session[ADMIN_LANGUAGE_SESSION_KEY] = language
