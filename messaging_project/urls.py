from django.contrib import admin
from django.urls import include, path, re_path

from messaging_project.api.views import WhoAmIView, not_found
from sending.webhooks import whatsapp_webhook

api_patterns = [
    path("me", WhoAmIView.as_view(), name="me"),
    path("", include("contacts.api.urls")),
    path("", include("canned_replies.api.urls")),
    path("", include("sending.api.urls")),
    # Anything else under /api/ is a JSON 404, even with DEBUG on.
    re_path(r"^.*$", not_found),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include(api_patterns)),
    path("webhooks/whatsapp/<uuid:organization_uuid>", whatsapp_webhook, name="whatsapp-webhook"),
    re_path(r"^webhooks/", not_found),
]

handler404 = "messaging_project.api.views.not_found"
handler500 = "messaging_project.api.views.server_error"
