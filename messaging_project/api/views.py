"""API views that belong to no resource."""

import sys

from django.core.exceptions import DisallowedHost
from django.http import JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework.response import Response
from rest_framework.views import APIView

from messaging_project.api.exceptions import (
    NOT_FOUND,
    SERVER_ERROR,
    UNAVAILABLE_ERRORS,
    error_body,
    unavailable_json,
)
from messaging_project.api.middleware import is_api_path
from messaging_project.api.viewsets import OrganizationScopedMixin


class WhoAmIView(OrganizationScopedMixin, APIView):
    """`GET /api/me`: the token's organization. Cheap: no query beyond authentication."""

    def get(self, request):
        organization = self.organization
        return Response(
            {
                "data": {
                    "organization_id": organization.id,
                    "organization_uuid": str(organization.uuid),
                    "organization_name": organization.name,
                    "token": request.auth.prefix,
                }
            }
        )


@csrf_exempt
def not_found(request, exception=None):
    """Unknown paths: JSON under /api/ and /webhooks/, Django's page elsewhere."""
    if is_api_path(request.path):
        return JsonResponse(error_body(404, NOT_FOUND), status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request, exception=None):
    """Django's 400s (a Host header not in ALLOWED_HOSTS, above all): JSON under /api/
    and /webhooks/, Django's page elsewhere."""
    if is_api_path(request.path):
        message = (
            "Invalid Host header." if isinstance(exception, DisallowedHost) else "Bad Request."
        )
        return JsonResponse(error_body(400, message), status=400)
    return defaults.bad_request(request, exception)


def server_error(request):
    if is_api_path(request.path):
        # Django calls handler500 while handling the exception, so it is still at hand.
        exc = sys.exception()
        if isinstance(exc, UNAVAILABLE_ERRORS):
            return unavailable_json(exc)
        return JsonResponse(error_body(500, SERVER_ERROR), status=500)
    return defaults.server_error(request)
