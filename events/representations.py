"""Endpoints and deliveries as the API shows them, for the API and the admin."""

from typing import Any

from django.utils import timezone

from events.models import Delivery, Endpoint
from messaging_project.core.formats import iso_datetime


def endpoint_listed(endpoint: Endpoint) -> dict[str, Any]:
    """An endpoint as the list (and the `webhook.disabled` event) shows it: no secret."""
    return {
        "uuid": str(endpoint.uuid),
        "url": endpoint.url,
        "events": list(endpoint.events),
        "format": endpoint.format,
        "is_active": endpoint.is_active,
        "disabled_reason": endpoint.disabled_reason or None,
        "disabled_at": iso_datetime(endpoint.disabled_at),
        "circuit": endpoint.circuit(timezone.now()),
        "backed_off_until": iso_datetime(endpoint.open_until),
        "failures_in_a_row": endpoint.failures_in_a_row,
        "created_at": iso_datetime(endpoint.created_at),
        "updated_at": iso_datetime(endpoint.updated_at),
    }


def endpoint_data(endpoint: Endpoint) -> dict[str, Any]:
    """An endpoint as its detail, its creation and its rotation show it: with the secret."""
    return {**endpoint_listed(endpoint), "secret": endpoint.secret}


def delivery_data(delivery: Delivery) -> dict[str, Any]:
    return {
        "id": delivery.msg_id,
        "event": delivery.event,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "response_status": delivery.response_status,
        "last_error": delivery.last_error or None,
        "next_attempt_at": iso_datetime(delivery.next_attempt_at),
        "created_at": iso_datetime(delivery.created_at),
    }
