"""The OpenAPI description of event webhook endpoints: the endpoint and delivery records,
the bodies, the viewset with its rotate-secret and deliveries actions.

EventsConfig.ready() imports this module, so drf-spectacular finds the extension."""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.utils import extend_schema_view
from rest_framework import serializers

from events.api.serializers import EndpointEditSerializer, EndpointInputSerializer
from events.models import Circuit, DeliveryStatus, Event, Format
from messaging_project.api.schema import (
    WriteResultSerializer,
    described,
    detail_of,
    documented,
    integer,
    page_of,
    resource_schema,
    text,
)

ISO = "ISO 8601 in UTC with microseconds and `Z`."


class EndpointListedSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    url = text()
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=Event.choices),
        help_text="The events sent to it; empty: every event.",
    )
    format = serializers.ChoiceField(
        choices=Format.choices, help_text="The body posted (docs/events.md)."
    )
    is_active = serializers.BooleanField()
    disabled_reason = text("Why it was turned off; null while it is on.", null=True)
    disabled_at = text("When it was turned off; null while it is on. " + ISO, null=True)
    circuit = serializers.ChoiceField(
        choices=Circuit.choices,
        help_text="The circuit breaker: `closed` (delivered as usual), `open` (backed off "
        "after failures in a row, nothing attempted), `half-open` (one attempt probes it).",
    )
    backed_off_until = text(
        "Until when it is backed off (then probed); null while it is closed. " + ISO, null=True
    )
    failures_in_a_row = serializers.IntegerField(
        help_text="Attempts failed since the last success."
    )
    created_at = text(ISO)
    updated_at = text(ISO)


class EndpointRecordSerializer(EndpointListedSerializer):
    secret = text(
        "`whsec_` + base64: the key of the `webhook-signature` (docs/events.md). "
        "Shown by the detail, the creation and the rotation; never in the list."
    )


class WriteResultWithSecretSerializer(WriteResultSerializer):
    """What creating an endpoint and rotating its secret answer."""

    secret = text("The endpoint's signing secret now (`whsec_` + base64).")


class DeliveryRecordSerializer(serializers.Serializer):
    id = text("The `webhook-id` header, the same on every attempt.")
    event = serializers.ChoiceField(choices=Event.choices)
    # Text, not an enum: another `status` enum (the chats') keeps its component name.
    status = text("One of " + ", ".join(f"`{value}`" for value in DeliveryStatus.values) + ".")
    attempts = integer()
    response_status = integer("The HTTP status of the last attempt's answer.", null=True)
    last_error = text("What went wrong in the last attempt.", null=True)
    next_attempt_at = text(ISO, null=True)
    created_at = text(ISO)


EndpointPage = page_of(EndpointListedSerializer, "EventWebhookPage")
EndpointDetail = detail_of(EndpointRecordSerializer, "EventWebhookDetail")
DeliveryPage = page_of(DeliveryRecordSerializer, "EventDeliveryPage")


def endpoint_schema(view):
    view = resource_schema(
        noun="event webhook",
        page=EndpointPage,
        detail=EndpointDetail,
        input_serializer=EndpointInputSerializer,
        edit_serializer=EndpointEditSerializer,
    )(view)
    return extend_schema_view(
        create=described(
            summary="Create an event webhook",
            success=WriteResultWithSecretSerializer,
            request=EndpointInputSerializer,
            creates=True,
        ),
        rotate_secret=described(
            summary="Rotate the secret (the old one still signs for 24 hours)",
            success=WriteResultWithSecretSerializer,
            codes=(404,),
        ),
        deliveries=described(
            summary="List the endpoint's deliveries, newest first",
            success=DeliveryPage,
            codes=(404,),
            list_=True,
        ),
    )(view)


class EndpointViewSchema(OpenApiViewExtension):
    target_class = "events.api.views.EndpointViewSet"
    view_replacement = documented(
        endpoint_schema,
        "The organization's own endpoints, to which every event is posted, signed as the "
        "Standard Webhooks specification says (see docs/events.md). At most 10.",
    )
