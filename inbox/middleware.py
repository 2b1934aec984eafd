"""The live checks of open inbox pages, answered before the admin's middleware.

Fifty open pages ask 25 checks a second (inbox/live.py); through the whole stack each
cost more than the API's no-op, most of it in middleware with nothing to do for them:
the token, not the session, says who asks; the answer is an empty 304 or 200, with no
text to translate, no cookie, no form and no page to frame. So this middleware, placed
after the request log (the check keeps its log line, its request id and Prometheus's
request totals) and after SecurityMiddleware (its HTTPS redirect and headers apply),
answers a GET of `/admin/inbox/live/<token>` itself, for an allowed host only (as
CommonMiddleware would check). Anything else goes on: another method reaches the
view, which answers 405.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase

from inbox import live

# inbox/admin_urls.py's `live` under messaging_project/urls.py's "admin/inbox/"
# (tests/inbox/test_admin_live.py checks that they agree).
LIVE_PATH = "/admin/inbox/live/"


class LiveCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        path = request.path_info
        if request.method == "GET" and path.startswith(LIVE_PATH):
            token = path[len(LIVE_PATH) :]
            if token and "/" not in token:
                request.get_host()  # DisallowedHost (a 400) for a host not allowed
                return live.answer(token, request.META.get("HTTP_IF_NONE_MATCH"))
        return self.get_response(request)
