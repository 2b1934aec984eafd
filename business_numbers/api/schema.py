"""The OpenAPI description of numbers, templates and the channel: the records that
`number_data`, `template_data` and `channel_data` return, and the views.

drf-spectacular finds the extensions below only once this module is imported:
BusinessNumbersConfig.ready() imports it. tests/sending/test_documented_shapes.py and
tests/numbers check that the data functions have exactly the fields documented here.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension, OpenApiViewExtension
from drf_spectacular.utils import extend_schema_view
from rest_framework import serializers

from business_numbers.api.serializers import (
    ChannelSettingsInputSerializer,
    NumberInputSerializer,
    NumberUpdateSerializer,
    TemplateInputSerializer,
    TemplateUpdateSerializer,
)
from messaging_project.api.schema import (
    LARAVEL_DATETIME,
    RESOURCE_DOC,
    AnyJsonField,
    RecordSerializer,
    described,
    detail_of,
    documented,
    integer,
    page_of,
    resource_schema,
    text,
)

# Templates ------------------------------------------------------------------------------


class TemplateRecordSerializer(RecordSerializer):
    name = text()
    language = text()
    category = text()
    status = text(
        "WhatsApp's status for the template (APPROVED, PENDING, REJECTED, PAUSED, DISABLED, "
        "...), kept current by the webhook. Only an APPROVED template can be sent."
    )
    reason = text(
        "Why the template has its status (a pause's explanation, a rejection's reason).",
        null=True,
    )
    quality = text("WhatsApp's quality score: GREEN, YELLOW, RED or UNKNOWN.", null=True)
    components = AnyJsonField()
    external_id = text()
    metadata = text(
        "The template as the channel describes it (`name`, `components`, `language`, "
        "`status`, `category`, `id`), JSON-encoded like a chat's metadata, as the original "
        "product lists it."
    )
    created_at = text(LARAVEL_DATETIME)
    updated_at = text(LARAVEL_DATETIME)


MessageTemplatePage = page_of(TemplateRecordSerializer, "MessageTemplatePage")
MessageTemplateDetail = detail_of(TemplateRecordSerializer, "MessageTemplateDetail")


class MessageTemplateViewSchema(OpenApiViewExtension):
    target_class = "business_numbers.api.views.MessageTemplateViewSet"
    view_replacement = documented(
        resource_schema(
            noun="message template",
            page=MessageTemplatePage,
            detail=MessageTemplateDetail,
            input_serializer=TemplateInputSerializer,
            edit_serializer=TemplateUpdateSerializer,
        ),
        "The organization's WhatsApp templates: those synced from WhatsApp and those "
        "written here (docs/templates.md). A write checks WhatsApp's rules first (400 "
        "naming the field), then is made at WhatsApp (its refusal is a 422 with "
        "`channel_error`, a channel failure a 502 or 504), then here; the status then "
        f"follows WhatsApp's webhooks. {RESOURCE_DOC}",
    )


class TemplateComponentsSchema(OpenApiSerializerFieldExtension):
    target_class = "business_numbers.api.serializers.TemplateComponentsField"

    def map_serializer_field(self, auto_schema, direction):
        return {
            "type": "array",
            "description": "WhatsApp's components: HEADER (format TEXT at most 60 "
            "characters and one variable, or IMAGE, VIDEO, DOCUMENT, LOCATION), BODY (at "
            "most 1,024; variables {{1}}..{{n}} in order, each with its example in "
            "`example.body_text`), FOOTER (at most 60, no variable), BUTTONS (at most 10, "
            "text at most 25).",
            "items": {
                "type": "object",
                "properties": {"type": {"type": "string", "example": "BODY"}},
                "required": ["type"],
                "additionalProperties": True,
            },
        }


# The channel -----------------------------------------------------------------------------


class ChannelRecordSerializer(serializers.Serializer):
    phone_number_id = text("The Cloud API's id of the number; null for the sandbox.", null=True)
    display_phone_number = text("The number as WhatsApp shows it, once it said so.", null=True)
    verified_name = text("The business name WhatsApp approved for the number.", null=True)
    quality_rating = serializers.ChoiceField(
        choices=["GREEN", "YELLOW", "RED", "UNKNOWN"],
        help_text="The number's quality as WhatsApp last reported it (the sandbox: GREEN).",
    )
    messaging_limit = text(
        "WhatsApp's tier of new conversations a day (TIER_250, TIER_1K, ... "
        "TIER_UNLIMITED); null until WhatsApp says. The sandbox: TIER_UNLIMITED.",
        null=True,
    )
    account_status = text(
        "ACTIVE, RESTRICTED, BANNED, ...; null until WhatsApp says. The sandbox: ACTIVE.",
        null=True,
    )
    restrictions = serializers.ListField(
        child=serializers.DictField(),
        help_text="The account's restrictions (`restriction_type`, `expiration` in unix "
        "seconds), as the last account_update gave them.",
    )
    enforce_service_window = serializers.BooleanField(
        help_text="Whether free-form sends outside the 24-hour window are refused (422)."
    )
    updated_at = text("When WhatsApp last changed any of these (ISO 8601), or null.", null=True)


ChannelDetail = detail_of(ChannelRecordSerializer, "ChannelDetail")


class ChannelWriteResultSerializer(serializers.Serializer):
    statusCode = integer("200.")  # noqa: N815 (the wire name)
    message = text("`Request processed successfully`.")
    # A declared field (DRF's metaclass takes it off the class): no clash with `data`.
    data = ChannelRecordSerializer()  # type: ignore[assignment]


class ChannelViewSchema(OpenApiViewExtension):
    target_class = "business_numbers.api.views.ChannelView"
    view_replacement = documented(
        extend_schema_view(
            get=described(summary="The WhatsApp number and its health", success=ChannelDetail),
            patch=described(
                summary="Change the channel's settings",
                success=ChannelWriteResultSerializer,
                request=ChannelSettingsInputSerializer,
            ),
        ),
        "The organization's WhatsApp number as WhatsApp last reported it through the "
        "webhook (quality, messaging limit, account status and restrictions), and the "
        "settings the organization changes itself. `channel.updated` is emitted when "
        "WhatsApp changes any of these.",
    )


# Numbers --------------------------------------------------------------------------------


class NumberRecordSerializer(serializers.Serializer):
    uuid = text()
    # A declared field (DRF's metaclass takes it off the class): no clash with `label`.
    label = text("The organization's name for the number (`sales`, `support`).")  # type: ignore[assignment]
    kind = serializers.ChoiceField(choices=["sandbox", "cloud"])
    phone_number_id = text("The Cloud API's id of the number; null for the sandbox.", null=True)
    business_account_id = text("The WhatsApp business account it belongs to.", null=True)
    display_phone_number = text("The number as WhatsApp shows it, once it said so.", null=True)
    verified_name = text("The business name WhatsApp approved for the number.", null=True)
    quality_rating = serializers.ChoiceField(choices=["GREEN", "YELLOW", "RED", "UNKNOWN"])
    messaging_limit = text("WhatsApp's tier (TIER_250 ... TIER_UNLIMITED), or null.", null=True)
    account_status = text("ACTIVE, RESTRICTED, BANNED, ...; null until WhatsApp says.", null=True)
    is_default = serializers.BooleanField(
        help_text="Sends go from the default number unless they say otherwise."
    )
    created_at = text(LARAVEL_DATETIME)


NumberPage = page_of(NumberRecordSerializer, "NumberPage")
NumberDetail = detail_of(NumberRecordSerializer, "NumberDetail")


class NumberViewSchema(OpenApiViewExtension):
    target_class = "business_numbers.api.views.NumberViewSet"
    view_replacement = documented(
        resource_schema(
            noun="number",
            page=NumberPage,
            detail=NumberDetail,
            input_serializer=NumberInputSerializer,
            edit_serializer=NumberUpdateSerializer,
            # A create already documents 409 (an Idempotency-Key reused); a phone
            # number id taken, a default or a number in use are 409s too.
            conflicts=("update", "destroy"),
        ),
        "The organization's WhatsApp numbers (docs/numbers.md). The access token is "
        f"write-only. {RESOURCE_DOC}",
    )
