from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.renderers import (
    OpenApiJsonRenderer,
    OpenApiJsonRenderer2,
    OpenApiYamlRenderer,
)
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

import messaging_project.api.schema  # noqa: F401  (registers the schema's view extensions)
from messaging_project.api import health
from messaging_project.api.metrics import metrics_view
from messaging_project.api.routers import app_routes
from messaging_project.api.views import WhoAmIView, not_found

api_patterns: list[URLPattern | URLResolver] = [
    path("me", WhoAmIView.as_view(), name="me"),
    # Public, no token: the OpenAPI schema (JSON, or YAML with ?format=yaml) and Swagger UI.
    re_path(
        r"^schema/?$",
        SpectacularAPIView.as_view(
            # application/json unless the client asks for YAML
            renderer_classes=[OpenApiJsonRenderer2, OpenApiJsonRenderer, OpenApiYamlRenderer]
        ),
        name="schema",
    ),
    re_path(r"^docs/?$", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    # Each app's routes, tried only for the first path segments listed with them: a
    # route starting with another is never reached (tests/api/test_routes.py).
    app_routes("contacts.api.urls", "contacts", "contact-groups"),
    app_routes("canned_replies.api.urls", "canned-replies"),
    app_routes("business_numbers.api.urls", "channel", "numbers", "templates"),
    app_routes("sending.api.urls", "send", "chats"),
    app_routes("campaigns.api.urls", "campaigns"),
    app_routes("inbox.api.urls", "conversations"),
    app_routes("analytics.api.urls", "analytics", "campaigns"),
    app_routes("events.api.urls", "webhooks"),
    # Anything else under /api/ is a JSON 404, even with DEBUG on.
    re_path(r"^.*$", not_found),
]

urlpatterns = [
    # For load balancers and monitoring: no token (docs/operations.md).
    path("health/live", health.live, name="health-live"),
    path("health/ready", health.ready, name="health-ready"),
    # Prometheus, with `Authorization: Bearer $METRICS_TOKEN` only.
    path("metrics", metrics_view, name="metrics"),
    # The inbox's pages are the admin's too, under its login (inbox/admin_urls.py).
    path("admin/inbox/", include("inbox.admin_urls")),
    # The analytics dashboard and the header's language switch, pages of the admin too.
    path("admin/analytics/", include("analytics.admin_urls")),
    path("admin/language/", include("accounts.admin_urls")),
    path("admin/", admin.site.urls),
    path("api/", include(api_patterns)),
    path("webhooks/", include("inbound.api.webhook_urls")),
    re_path(r"^webhooks/", not_found),
]

handler400 = "messaging_project.api.views.bad_request"
handler404 = "messaging_project.api.views.not_found"
handler500 = "messaging_project.api.views.server_error"
