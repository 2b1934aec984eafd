"""Bearer token authentication for the API."""

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled

from accounts.services import authenticate_token
from messaging_project.api import auth_failures
from messaging_project.core.client_address import client_address
from messaging_project.core.metrics import RATE_LIMIT_REFUSALS


class ApiClient:
    """`request.user` for an API call: the organization the token belongs to."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, token) -> None:
        self.token = token
        self.organization = token.organization

    def __str__(self) -> str:
        return f"API client of {self.organization}"


class BearerTokenAuthentication(BaseAuthentication):
    """No header or another scheme: not authenticated (401 "missing").
    A Bearer header with an unknown, revoked or malformed token: 401 "invalid".
    An address with too many recent failures: 429, whatever the token (auth_failures)."""

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != b"bearer":
            return None
        address = client_address(request)
        wait = auth_failures.blocked_for(address)
        if wait is not None:
            RATE_LIMIT_REFUSALS.labels(limit="auth_failures").inc()
            raise Throttled(wait=wait)
        token = authenticate_token(parts[1].decode("ascii", "replace")) if len(parts) == 2 else None
        if token is None:
            wait = auth_failures.record_failure(address)
            if wait is not None:  # a parallel guess used up the budget since the check
                RATE_LIMIT_REFUSALS.labels(limit="auth_failures").inc()
                raise Throttled(wait=wait)
            raise AuthenticationFailed()
        return ApiClient(token), token

    def authenticate_header(self, request) -> str:
        return "Bearer"
