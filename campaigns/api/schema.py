"""The OpenAPI description of campaigns: the records that `campaign_data` and
`recipient_data` return, the create body, and the viewset's operations.

CampaignsConfig.ready() imports this module so drf-spectacular finds the extension;
tests/campaigns/test_api.py checks the data functions return exactly these fields.
"""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.utils import extend_schema_view
from rest_framework import serializers

from campaigns.api.serializers import CampaignInputSerializer
from campaigns.models import CampaignStatus
from messaging_project.api.schema import (
    ISO_DATETIME,
    WriteResultSerializer,
    described,
    detail_of,
    documented,
    integer,
    page_of,
    text,
)


class CampaignRecordSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    name = text()
    status = text("One of: " + ", ".join(CampaignStatus.values) + ".")
    total = integer("Recipients, fixed when the campaign starts (0 until then).")
    pending = integer("Waiting for their turn, or being sent.")
    sent = integer("Accepted by the channel and not reported failed since.")
    delivered = integer("Of the sent, delivered (or read).")
    read = integer("Of the sent, read.")
    failed = integer("Refused by the channel, not a number, or reported failed.")
    skipped = integer("Opted out, or still pending when the campaign was cancelled.")
    unknown = integer(
        "Being sent by a worker that stopped: WhatsApp may or may not have them; "
        "they are not sent again."
    )
    rate = integer("Messages per second at most.")
    scheduled_at = text(ISO_DATETIME, null=True)
    created_at = text(ISO_DATETIME)
    started_at = text(ISO_DATETIME, null=True)
    finished_at = text(ISO_DATETIME, null=True)


class RecipientRecordSerializer(serializers.Serializer):
    phone = text("Digits, country code first; the input as given when it is not a number.")
    contact_uuid = serializers.UUIDField(allow_null=True)
    status = text(
        "pending, sending, sent, failed, skipped or unknown; once sent it follows the "
        "chat: delivered, read, failed."
    )
    chat_uuid = serializers.UUIDField(allow_null=True)
    error = text(null=True)


CampaignPage = page_of(CampaignRecordSerializer, "CampaignPage")
CampaignDetail = detail_of(CampaignRecordSerializer, "CampaignDetail")
RecipientPage = page_of(RecipientRecordSerializer, "CampaignRecipientPage")


class CampaignViewSchema(OpenApiViewExtension):
    target_class = "campaigns.api.views.CampaignViewSet"
    view_replacement = documented(
        extend_schema_view(
            list=described(summary="List campaigns", success=CampaignPage, list_=True),
            retrieve=described(summary="Show a campaign", success=CampaignDetail, codes=(404,)),
            create=described(
                summary="Create a campaign",
                success=WriteResultSerializer,
                request=CampaignInputSerializer,
                creates=True,
            ),
            recipients=described(
                summary="List a campaign's recipients",
                success=RecipientPage,
                list_=True,
                codes=(404,),
            ),
            cancel=described(
                summary="Cancel a campaign (returns once no further send will start)",
                success=WriteResultSerializer,
                codes=(404,),
            ),
        ),
        "Campaigns: one template to a contact group or a list of numbers, paced at "
        "`rate` messages per second, each recipient sent at most once "
        "(docs/campaigns.md).",
    )
