"""The OpenAPI description of campaigns: the records that `campaign_data` and
`recipient_data` return, the create body, and the viewset's operations.

CampaignsConfig.ready() imports this module so drf-spectacular finds the extension;
tests/campaigns/test_api.py checks the data functions return exactly these fields.
"""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.utils import OpenApiResponse, extend_schema_view
from rest_framework import serializers

from campaigns.api.serializers import CampaignInputSerializer
from campaigns.models import CampaignStatus, PausedReason
from messaging_project.api.schema import (
    ISO_DATETIME,
    ErrorSerializer,
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
    paused_reason = text(
        "Why a paused campaign stopped: " + ", ".join(PausedReason.values) + "; null otherwise.",
        null=True,
    )
    total = integer("Recipients, fixed when the campaign starts (0 until then).")
    pending = integer("Waiting for their turn, or being sent.")
    sent = integer("Accepted by the channel and not reported failed since.")
    delivered = integer("Of the sent, delivered (or read).")
    read = integer("Of the sent, read.")
    failed = integer("Refused by the channel, not a number, or reported failed.")
    skipped = integer("Opted out, or still pending when the campaign was cancelled.")
    unknown = integer(
        "Being sent by a worker that stopped: WhatsApp may or may not have them; "
        "they are not sent again unless retry-unknown is called. A status webhook that "
        "comes for one settles it (sent, delivered, read or failed)."
    )
    waiting = integer(
        "New conversations over the number's messaging limit: they go when the rolling "
        "24 hours allow."
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
        "pending, sending, sent, failed, skipped, unknown or waiting; once sent it follows the "
        "chat: delivered, read, failed."
    )
    chat_uuid = serializers.UUIDField(allow_null=True)
    error = text(null=True)


CampaignPage = page_of(CampaignRecordSerializer, "CampaignPage")
CampaignDetail = detail_of(CampaignRecordSerializer, "CampaignDetail")
RecipientPage = page_of(RecipientRecordSerializer, "CampaignRecipientPage")


CONFLICT = OpenApiResponse(
    ErrorSerializer, "The campaign's state does not allow it; the message says why."
)


class RetryResultSerializer(WriteResultSerializer):
    retried = integer("Recipients given back to the senders by this call (0 on a repeat).")


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
            resume=described(
                summary="Resume a paused campaign once the cause of the pause is gone",
                description=(
                    "A campaign pauses when its template stops being APPROVED, the number's "
                    "quality becomes RED, or the account is restricted or banned "
                    "(`paused_reason`). Resuming a running campaign changes nothing; a "
                    "campaign that is neither, or whose cause lasts, is a 409 saying why."
                ),
                success=WriteResultSerializer,
                codes=(404,),
                extra={409: CONFLICT},
            ),
            retry_unknown=described(
                summary="Send again the recipients whose outcome stayed unknown",
                description=(
                    "Recipients still `unknown` 10 minutes after their send, with no status "
                    "webhook for it, are sent again, once, even by calls made at the same "
                    "time. WhatsApp may have the first message: it may then arrive twice. "
                    "A completed campaign runs again for them; scheduled or cancelled: 409."
                ),
                success=RetryResultSerializer,
                codes=(404,),
                extra={409: CONFLICT},
            ),
        ),
        "Campaigns: one template to a contact group or a list of numbers, paced at "
        "`rate` messages per second, each recipient sent at most once "
        "(docs/campaigns.md).",
    )
