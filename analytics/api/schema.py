"""The OpenAPI description of the analytics: the day, campaign report and staff records
and the views' operations. AnalyticsConfig.ready() imports this module so drf-spectacular
finds the extensions."""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema_view
from rest_framework import serializers

from messaging_project.api.schema import described, documented, integer, text

CATEGORY_COUNTS = serializers.DictField(
    child=serializers.IntegerField(),
    help_text="Billable messages by WhatsApp's pricing category (`marketing`, `utility`, ...).",
)


class DayRecordSerializer(serializers.Serializer):
    date = text("The UTC day, YYYY-MM-DD.")
    outbound = integer("Messages sent (or refused) that day, whatever became of them.")
    sent = integer("Of those, sent now or further (delivered, read).")
    delivered = integer("Of those, delivered now or further (read).")
    read = integer("Of those, read (or played).")
    failed = integer("Of those, failed.")
    inbound = integer("Messages received that day.")
    billable = serializers.DictField(child=serializers.IntegerField())


# `data` and `errors` below are declared fields, which DRF's metaclass takes out of the
# class: no clash with the Serializer properties of those names, which the stubs miss.
class DaysSerializer(serializers.Serializer):
    data = DayRecordSerializer(many=True)  # type: ignore[assignment]


class ErrorCountSerializer(serializers.Serializer):
    code = integer("WhatsApp's error code; null for a failure before the channel.", null=True)
    title = text()
    count = integer()


class CampaignReportRecordSerializer(serializers.Serializer):
    recipients = integer()
    sent = integer("Sent now or further.")
    delivered = integer("Delivered now or further.")
    read = integer()
    replied = integer("Recipients who wrote within 72 hours after their campaign message.")
    failed = integer()
    opted_out = integer("Recipients sent the message whose contact is opted out now.")
    errors = ErrorCountSerializer(many=True)  # type: ignore[assignment]
    billable = serializers.DictField(child=serializers.IntegerField())


class CampaignReportSerializer(serializers.Serializer):
    data = CampaignReportRecordSerializer()  # type: ignore[assignment]


class AgentRecordSerializer(serializers.Serializer):
    username = text()
    conversations_assigned = integer(
        "Conversations assigned to them now whose latest message is in the range."
    )
    conversations_resolved = integer(
        "Conversations assigned to them now, resolved within the range."
    )
    messages_sent = integer("Messages they sent from the admin in the range.")
    median_first_response_seconds = serializers.FloatField(allow_null=True)


class AgentsSerializer(serializers.Serializer):
    data = AgentRecordSerializer(many=True)  # type: ignore[assignment]


RANGE = [
    OpenApiParameter("from", OpenApiTypes.DATE, required=True, description="First UTC day."),
    OpenApiParameter(
        "to", OpenApiTypes.DATE, required=True, description="Last UTC day (at most 366 days)."
    ),
    OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], description="csv: a file."),
]
CSV = OpenApiResponse(OpenApiTypes.STR, "The same figures as CSV (`format=csv`).")


class MessagesViewSchema(OpenApiViewExtension):
    target_class = "analytics.api.views.MessagesView"
    view_replacement = documented(
        extend_schema_view(
            get=described(
                summary="Messages per UTC day",
                success=DaysSerializer,
                codes=(400,),
                extra_parameters=[
                    *RANGE,
                    OpenApiParameter(
                        "number", OpenApiTypes.UUID, description="One of the numbers only."
                    ),
                ],
            )
        ),
        "Figures kept as messages change (docs/analytics.md).",
    )


class AgentsViewSchema(OpenApiViewExtension):
    target_class = "analytics.api.views.AgentsView"
    view_replacement = documented(
        extend_schema_view(
            get=described(
                summary="Staff members' figures",
                success=AgentsSerializer,
                codes=(400,),
                extra_parameters=RANGE,
            )
        ),
        "Each staff member of the organization (docs/analytics.md).",
    )


class CampaignReportViewSchema(OpenApiViewExtension):
    target_class = "analytics.api.views.CampaignReportView"
    view_replacement = documented(
        extend_schema_view(
            get=described(
                summary="A campaign's report", success=CampaignReportSerializer, codes=(404,)
            )
        ),
        "What a campaign's messages did (docs/analytics.md).",
    )
