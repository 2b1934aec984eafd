from collections.abc import Iterable
from typing import Any

from django.urls import URLResolver, include
from django.urls.resolvers import RoutePattern
from rest_framework.routers import SimpleRouter


class ApiRouter(SimpleRouter):
    """`/api/contacts` as api.md writes it; a trailing slash is accepted too."""

    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"


class FirstSegments(RoutePattern):
    """An app's include under /api/ that consumes nothing, as `path("", ...)` does, so its
    routes keep their whole regexes (for reverse() and the OpenAPI schema), but that
    matches only the paths whose first segment is one of the app's."""

    def __init__(self, segments: Iterable[str]) -> None:
        super().__init__("")
        self.segments = frozenset(segments)

    def match(self, path: str) -> tuple[str, tuple[Any, ...], dict[str, int | str]] | None:
        return (path, (), {}) if path.partition("/")[0] in self.segments else None


def app_routes(urlconf: str, *first_segments: str) -> URLResolver:
    """`path("", include(urlconf))` for an app whose routes each start with one of
    `first_segments`, tried only for those: with every app's routes tried in turn,
    resolving the inbox's messages page took three times /api/me's (docs/inbox.md,
    "Performance")."""
    urlconf_module, app_name, namespace = include(urlconf)
    return URLResolver(
        FirstSegments(first_segments), urlconf_module, app_name=app_name, namespace=namespace
    )
