"""Headers every API response carries (caching, CORS, rate limit, gzip), the answers to
bodies Django would misread (413 too large, 411 chunked, 400 empty JSON), Laravel's
method spoofing, and the admin's Content-Security-Policy."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpResponse, JsonResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError
from django.http.request import RawPostDataException
from django.middleware.gzip import GZipMiddleware
from django.utils.deprecation import MiddlewareMixin

from messaging_project.api.parsers import BODY_TOO_LARGE, MALFORMED_BODY, is_empty_json_body

API_PREFIX = "/api/"
WEBHOOK_PREFIX = "/webhooks/"
EXPOSED_HEADERS = (
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed"
)
LENGTH_REQUIRED = "A request body must be sent with a Content-Length header."
# The admin loads only its own scripts and styles; change_list.html has one inline <style>.
ADMIN_CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


def is_api_path(path: str) -> bool:
    return path.startswith((API_PREFIX, WEBHOOK_PREFIX))


def body_too_large(request) -> bool:
    """A declared body over DATA_UPLOAD_MAX_MEMORY_SIZE. Refused before anything reads it:
    Django would raise RequestDataTooBig on reading, which becomes an HTML 400. (Without
    a Content-Length, Django reads no body at all.)"""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if request.path.rstrip("/") in settings.LARGE_BODY_PATHS:
        limit = settings.LARGE_BODY_MAX_SIZE
    return limit is not None and length > limit


def body_length_unknown(request) -> bool:
    """A body sent without a Content-Length (`Transfer-Encoding: chunked`). Django reads
    no body without one, so the request would silently look empty: it gets a 411."""
    return bool(request.META.get("HTTP_TRANSFER_ENCODING")) and not request.META.get(
        "CONTENT_LENGTH"
    )


def json_error(status: int, message: str) -> JsonResponse:
    return JsonResponse({"statusCode": status, "message": message}, status=status)


class ApiResponseMiddleware(GZipMiddleware):
    """Gzip, `Cache-Control`, CORS and rate-limit headers, for /api/ and /webhooks/ only.

    The admin is left alone: compressing pages that carry a CSRF token invites BREACH.
    """

    def process_request(self, request):
        if is_api_path(request.path):
            if body_length_unknown(request):
                return json_error(411, LENGTH_REQUIRED)
            if body_too_large(request):
                return json_error(413, BODY_TOO_LARGE)
        if request.path.startswith(API_PREFIX) and is_empty_json_body(request):
            return json_error(400, MALFORMED_BODY)
        if (
            request.method == "OPTIONS"
            and request.path.startswith(API_PREFIX)
            and "HTTP_ACCESS_CONTROL_REQUEST_METHOD" in request.META
        ):
            response = HttpResponse(status=204)
            response["Access-Control-Allow-Methods"] = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
            response["Access-Control-Allow-Headers"] = (
                "Authorization, Content-Type, Accept, Idempotency-Key, X-HTTP-Method-Override"
            )
            response["Access-Control-Max-Age"] = "86400"
            return response
        return None

    def process_response(self, request, response):
        if not is_api_path(request.path):
            return response
        # The default for JSON answers; a view that said otherwise (media files:
        # `private, no-store`) keeps its own.
        response.setdefault("Cache-Control", "no-cache, private")
        if request.path.startswith(API_PREFIX):
            response["Access-Control-Allow-Origin"] = "*"
            response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
        state = getattr(request, "rate_limit", None)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return super().process_response(request, response)


# Laravel's method spoofing (docs/api.md): what a POST may say it is instead.
OVERRIDE_HEADER = "HTTP_X_HTTP_METHOD_OVERRIDE"
OVERRIDE_FIELD = "_method"
SPOOFED_METHODS = {"PUT", "PATCH", "DELETE"}
FORM_TYPES = {"application/x-www-form-urlencoded", "multipart/form-data"}
BAD_OVERRIDE = (
    "The method override (_method or X-HTTP-Method-Override) must be PUT, PATCH or DELETE."
)


class MethodOverrideMiddleware(MiddlewareMixin):
    """A POST to the API that says it is a PUT, PATCH or DELETE, as Laravel lets PHP
    clients and HTML forms say it, is that method: by the header
    `X-HTTP-Method-Override`, else the form field (or query parameter) `_method`, the
    order Laravel reads them in. `POST` changes nothing; any other value is a 400. Only
    for /api/: the channel's webhook and the admin keep their methods."""

    def process_request(self, request):
        if request.method != "POST" or not request.path.startswith(API_PREFIX):
            return None
        wanted = (
            request.META.get(OVERRIDE_HEADER)
            or form_method(request)
            or request.GET.get(OVERRIDE_FIELD)
        )
        if not wanted:
            return None
        method = wanted.strip().upper()
        if method == "POST":
            return None
        if method not in SPOOFED_METHODS:
            return json_error(400, BAD_OVERRIDE)
        request.method = method
        return None


def form_method(request) -> str:
    """A form body's `_method` field. The body (within the API's limit, checked by
    ApiResponseMiddleware before this runs) is read once and kept: DRF's parsers read the
    same bytes again. The import's large uploads are never read here (they are streamed
    to storage, and nobody edits by uploading a file). A body Django cannot parse is left
    to DRF's parsers, whose errors are the API's."""
    if request.content_type not in FORM_TYPES:
        return ""
    if request.path.rstrip("/") in settings.LARGE_BODY_PATHS:
        return ""
    try:
        request.body  # noqa: B018 - read (and kept) before request.POST parses a copy
        value = request.POST.get(OVERRIDE_FIELD)
    except (
        RawPostDataException,
        RequestDataTooBig,
        SuspiciousOperation,
        MultiPartParserError,
        UnreadablePostError,
    ):
        return ""
    return value if isinstance(value, str) else ""


class AdminContentSecurityPolicyMiddleware(MiddlewareMixin):
    """A Content-Security-Policy on the admin's pages, where a session cookie is worth
    stealing. (X-Frame-Options, nosniff and Referrer-Policy come from Django's own
    middleware, for every page.)"""

    def process_response(self, request, response):
        if request.path.startswith("/admin/"):
            response.setdefault("Content-Security-Policy", ADMIN_CSP)
        return response
