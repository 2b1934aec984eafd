"""Endpoints and deliveries as the API shows them, for the API and the admin."""

from typing import Any

from events.models import Delivery, Endpoint
from messaging_project.core.formats import iso_datetime


def endpoint_data(endpoint: Endpoint) -> dict[str, Any]:
    return {
        "uuid": str(endpoint.uuid),
        "url": endpoint.url,
        "events": list(endpoint.events),
        "format": endpoint.format,
        "is_active": endpoint.is_active,
        "disabled_reason": endpoint.disabled_reason or None,
        "secret": endpoint.secret,
        "created_at": iso_datetime(endpoint.created_at),
        "updated_at": iso_datetime(endpoint.updated_at),
    }


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
