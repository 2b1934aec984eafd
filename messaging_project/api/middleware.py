"""Headers every API response carries: caching, CORS, rate limit, gzip."""

from django.http import HttpResponse
from django.middleware.gzip import GZipMiddleware

API_PREFIX = "/api/"
WEBHOOK_PREFIX = "/webhooks/"
EXPOSED_HEADERS = (
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed"
)


def is_api_path(path: str) -> bool:
    return path.startswith((API_PREFIX, WEBHOOK_PREFIX))


class ApiResponseMiddleware(GZipMiddleware):
    """Gzip, `Cache-Control`, CORS and rate-limit headers, for /api/ and /webhooks/ only.

    The admin is left alone: compressing pages that carry a CSRF token invites BREACH.
    """

    def process_request(self, request):
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
