"""Tenancy is enforced in one place: every API view uses the scoping mixin."""

from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.views import APIView

from messaging_project.api.viewsets import OrganizationScopedMixin

# The only API views without a token: the OpenAPI schema and Swagger UI, which show no
# organization's data.
PUBLIC_VIEWS = {SpectacularAPIView, SpectacularSwaggerView}


def api_views(patterns=None, prefix=""):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from api_views(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/"):
            view_class = getattr(pattern.callback, "cls", None)
            if view_class not in PUBLIC_VIEWS:
                yield route, view_class


def test_every_api_view_is_scoped_to_the_organization():
    seen = list(api_views())
    assert len(seen) >= 5  # the walk found the API
    for route, view_class in seen:
        if view_class is None:  # a plain function: only the JSON 404 catch-all
            continue
        assert issubclass(view_class, APIView)
        assert issubclass(view_class, OrganizationScopedMixin), f"{route} skips tenancy"


def test_every_api_view_requires_authentication():
    from rest_framework.permissions import IsAuthenticated

    for route, view_class in api_views():
        if view_class is not None:
            assert any(
                issubclass(permission, IsAuthenticated)
                for permission in view_class.permission_classes
            ), route
