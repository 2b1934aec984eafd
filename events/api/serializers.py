"""Event webhook endpoints on the wire: the request bodies, the endpoint and delivery
records."""

from rest_framework import serializers

from events.models import Event, Format
from messaging_project.api.fields import StrictBooleanField, StrictCharField
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


class FormatField(serializers.ChoiceField):
    def __init__(self, **kwargs):
        super().__init__(
            choices=Format.choices,
            help_text=(
                "The body posted: `standard` (`{type, timestamp, data}`) or `swiftchats` "
                "(the original product's `{event, data}`); see docs/events.md."
            ),
            error_messages={
                "invalid_choice": "Unknown format; the formats are: "
                + ", ".join(Format.values)
                + "."
            },
            **kwargs,
        )


class EndpointInputSerializer(serializers.Serializer):
    url = EndpointUrlField()
    # Absent, null or empty: every event.
    events = serializers.ListField(
        child=EventNameField(), required=False, allow_null=True, allow_empty=True
    )
    format = FormatField(required=False)


class EndpointEditSerializer(EndpointInputSerializer):
    url = EndpointUrlField(required=False)
    is_active = StrictBooleanField(required=False)
