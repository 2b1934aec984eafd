"""Event webhook endpoints on the wire: the request bodies, the endpoint and delivery
records."""

from typing import Any

from rest_framework import serializers

from events.models import Delivery, Endpoint, Event
from messaging_project.api.fields import StrictBooleanField, StrictCharField
from messaging_project.core.formats import iso_datetime
from messaging_project.core.public_urls import MAX_URL_LENGTH, url_problem


class EndpointUrlField(StrictCharField):
    """http(s), to a host whose every address is public (unless WEBHOOK_ALLOW_PRIVATE_URLS)."""

    def __init__(self, **kwargs):
        super().__init__(max_length=MAX_URL_LENGTH, **kwargs)

    def to_internal_value(self, data):
        url = super().to_internal_value(data).strip()
        problem = url_problem(url)
        if problem:
            raise serializers.ValidationError(problem)
        return url


class EventNameField(serializers.ChoiceField):
    def __init__(self, **kwargs):
        super().__init__(
            choices=Event.choices,
            error_messages={
                # The input is not echoed: it may hold what JSON cannot carry.
                "invalid_choice": "Unknown event; the events are: " + ", ".join(Event.values) + "."
            },
            **kwargs,
        )


class EndpointInputSerializer(serializers.Serializer):
    url = EndpointUrlField()
    # Absent, null or empty: every event.
    events = serializers.ListField(
        child=EventNameField(), required=False, allow_null=True, allow_empty=True
    )


class EndpointEditSerializer(EndpointInputSerializer):
    url = EndpointUrlField(required=False)
    is_active = StrictBooleanField(required=False)


def endpoint_data(endpoint: Endpoint) -> dict[str, Any]:
    return {
        "uuid": str(endpoint.uuid),
        "url": endpoint.url,
        "events": list(endpoint.events),
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
