"""Headers every API response carries (caching, CORS, rate limit, gzip), the 413 for
oversized bodies, and the admin's Content-Security-Policy."""

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.middleware.gzip import GZipMiddleware
from django.utils.deprecation import MiddlewareMixin

API_PREFIX = "/api/"
WEBHOOK_PREFIX = "/webhooks/"
EXPOSED_HEADERS = (
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed"
)
BODY_TOO_LARGE = "The request body is too large."
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
    return limit is not None and length > limit


class ApiResponseMiddleware(GZipMiddleware):
    """Gzip, `Cache-Control`, CORS and rate-limit headers, for /api/ and /webhooks/ only.

    The admin is left alone: compressing pages that carry a CSRF token invites BREACH.
    """

    def process_request(self, request):
        if is_api_path(request.path) and body_too_large(request):
            return JsonResponse({"statusCode": 413, "message": BODY_TOO_LARGE}, status=413)
        if (
            request.method == "OPTIONS"
            and request.path.startswith(API_PREFIX)
            and "HTTP_ACCESS_CONTROL_REQUEST_METHOD" in request.META
        ):
            response = HttpResponse(status=204)
            response["Access-Control-Allow-Methods"] = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
            response["Access-Control-Allow-Headers"] = (
                "Authorization, Content-Type, Accept, Idempotency-Key"
            )
            response["Access-Control-Max-Age"] = "86400"
            return response
        return None

    def process_response(self, request, response):
        if not is_api_path(request.path):
            return response
        response["Cache-Control"] = "no-cache, private"
        if request.path.startswith(API_PREFIX):
            response["Access-Control-Allow-Origin"] = "*"
            response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
        state = getattr(request, "rate_limit", None)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return super().process_response(request, response)


class AdminContentSecurityPolicyMiddleware(MiddlewareMixin):
    """A Content-Security-Policy on the admin's pages, where a session cookie is worth
    stealing. (X-Frame-Options, nosniff and Referrer-Policy come from Django's own
    middleware, for every page.)"""

    def process_response(self, request, response):
        if request.path.startswith("/admin/"):
            response.setdefault("Content-Security-Policy", ADMIN_CSP)
        return response
