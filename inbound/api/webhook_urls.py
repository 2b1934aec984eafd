"""The WhatsApp webhook's URL, under /webhooks/ (outside /api/: no token, signed)."""

from django.urls import path

from inbound.api.webhook import whatsapp_webhook

urlpatterns = [
    path("whatsapp/<uuid:organization_uuid>", whatsapp_webhook, name="whatsapp-webhook"),
]
