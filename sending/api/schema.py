"""The OpenAPI description of chats and sends: the records that `chat_data`,
`chat_record` and `status_history` return, the answers of the two
sends, the template component's shape, and the views.

(Over 400 lines: one description per shape the sending API answers, read side by side.)

drf-spectacular finds the extensions below only once this module is imported:
SendingConfig.ready() imports it, so it is loaded wherever Django is set up. The shared
pieces are in messaging_project/api/schema.py, the contact record in
contacts/api/schema.py; tests/sending/test_documented_shapes.py checks that the data
functions and the send answers have exactly the fields documented here.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension, OpenApiViewExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema_view
from rest_framework import serializers

from contacts.api.schema import ContactRecordSerializer
from messaging_project.api.schema import (
    ISO_DATETIME,
    LARAVEL_DATETIME,
    RESOURCE_DOC,
    AnyJsonField,
    ChannelErrorSerializer,
    ChannelFailureSerializer,
    ErrorSerializer,
    RecordSerializer,
    described,
    detail_of,
    documented,
    integer,
    page_of,
    resource_schema,
    text,
)
from sending.api.serializers import (
    COMPONENT_TYPES,
    COMPONENTS_MAX_BYTES,
    PARAMETER_TYPES,
    SendContactsInputSerializer,
    SendInteractiveInputSerializer,
    SendLocationInputSerializer,
    SendMediaInputSerializer,
    SendMessageInputSerializer,
    SendReactionInputSerializer,
    SendTemplateInputSerializer,
    TemplateComponentField,
)
from sending.models import ChatSource, ChatStatus, ChatType

# Chats and templates --------------------------------------------------------------------


class ChatMediaRecordSerializer(serializers.Serializer):
    """`sending.representations.media_data`: an inbound chat's media."""

    type = text("image, audio, video, document or sticker")
    status = text(
        "`pending` until fetched from the channel, then `available` "
        "(GET /api/chats/{uuid}/media gives the file) or `failed`."
    )
    mime_type = text(null=True)
    file_name = text("A document's name, as the customer sent it.", null=True)
    file_size = integer("Bytes, once available.", null=True)


class TemplateChatRecordSerializer(RecordSerializer):
    """The chat in a template send's answer: no contact and no deletion fields."""

    wam_id = text("The channel's message id.", null=True)
    contact_id = integer()
    type = serializers.ChoiceField(choices=ChatType.choices)
    metadata = text("JSON-encoded description of the message.", null=True)
    media_id = integer(null=True)
    status = serializers.ChoiceField(choices=ChatStatus.choices)
    # A declared field (DRF's metaclass takes it off the class): no clash with `source`.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=ChatSource.choices,
        help_text="Who wrote the message: `customer` (inbound), `api` (sent through this "
        "service: the API, auto-replies, campaigns) or `business_app` (sent from the "
        "WhatsApp Business app on the same number).",
    )
    created_at = text(LARAVEL_DATETIME)
    sent_at = text(
        f"{ISO_DATETIME}. The time WhatsApp stamped the message (inbound messages, Business "
        "app messages, imported history); null for sends through this service, whose times "
        "are in the status history.",
        null=True,
    )
    media = ChatMediaRecordSerializer(
        allow_null=True, help_text="The media an inbound message carried; null otherwise."
    )


class SentChatRecordSerializer(TemplateChatRecordSerializer):
    """The chat in a send's answer (`sending.representations.chat_data`)."""

    deleted_by = integer(null=True)
    deleted_at = text(LARAVEL_DATETIME, null=True)
    contact = ContactRecordSerializer()


class ChatFailureSerializer(serializers.Serializer):
    code = integer(null=True)
    message = text(null=True)
    details = AnyJsonField()


class ChatRecordSerializer(SentChatRecordSerializer):
    number = text("The uuid of the organization's number the message was sent from or to.")
    """A chat in /api/chats: the send's chat, and why it failed when it did."""

    error = ChatFailureSerializer(allow_null=True, help_text="Null unless the status is failed.")


class ChatStatusEventSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=ChatStatus.choices)
    timestamp = text(LARAVEL_DATETIME, null=True)
    error_code = integer(null=True)
    error_title = text(null=True)
    pricing = AnyJsonField(
        help_text="WhatsApp's `pricing` object of the status (billable, pricing_model, "
        "category), as sent; null when it gave none."
    )
    conversation = AnyJsonField(
        help_text="WhatsApp's `conversation` object of the status (id, origin, "
        "expiration_timestamp), as sent; null when it gave none."
    )


class ChatDetailRecordSerializer(ChatRecordSerializer):
    statuses = ChatStatusEventSerializer(many=True, help_text="Status updates, oldest first.")


ChatPage = page_of(ChatRecordSerializer, "ChatPage")
ChatDetail = detail_of(ChatDetailRecordSerializer, "ChatDetail")


# Send answers ---------------------------------------------------------------------------


class SentContactSerializer(serializers.Serializer):
    input = text("The phone as it was sent.")
    wa_id = text("Digits only.")


class SentMessageSerializer(serializers.Serializer):
    id = text("The channel's message id (`wam_id`).")


class SentTemplateMessageSerializer(SentMessageSerializer):
    message_status = text("`accepted` as a rule.")


class SendResultSerializer(serializers.Serializer):
    messaging_product = text("`whatsapp`")
    contacts = SentContactSerializer(many=True)
    messages = SentMessageSerializer(many=True)
    chat = SentChatRecordSerializer()


class TemplateSendResultSerializer(SendResultSerializer):
    messages = SentTemplateMessageSerializer(many=True)
    # A declared field, replaced with the template send's record.
    chat = TemplateChatRecordSerializer()  # type: ignore[assignment]


class SendOutcomeSerializer(serializers.Serializer):
    success = serializers.BooleanField(help_text="Always true: failures are HTTP errors.")
    # A declared field (DRF's metaclass takes it off the class): no clash with `data`.
    data = SendResultSerializer()  # type: ignore[assignment]


class TemplateSendOutcomeSerializer(serializers.Serializer):
    success = serializers.BooleanField(help_text="Always true: failures are HTTP errors.")
    # A declared field (DRF's metaclass takes it off the class): no clash with `data`.
    data = TemplateSendResultSerializer()  # type: ignore[assignment]


class SendResponseSerializer(serializers.Serializer):
    statusCode = integer("200")  # noqa: N815
    # A declared field (DRF's metaclass takes it off the class): no clash with `data`.
    data = SendOutcomeSerializer()  # type: ignore[assignment]


class TemplateSendResponseSerializer(serializers.Serializer):
    statusCode = integer("200")  # noqa: N815
    # A declared field (DRF's metaclass takes it off the class): no clash with `data`.
    data = TemplateSendOutcomeSerializer()  # type: ignore[assignment]


# A send's failures: the channel refused, failed or did not answer -----------------------


class SendRefusedSerializer(ErrorSerializer):
    channel_error = ChannelErrorSerializer(
        required=False, help_text="Present when the channel refused the message."
    )


CHANNEL_ERRORS = {
    422: OpenApiResponse(
        SendRefusedSerializer,
        "The channel refused the message (Graph's own text, for example outside the "
        "24-hour window), or the service refused it before calling the channel: a template "
        "WhatsApp has not approved (`channel_error.code` `template_not_approved`), a "
        "free-form message outside the 24-hour window when the organization enforces it "
        "(`131047`). Or the `Idempotency-Key` was already used with another body.",
    ),
    502: OpenApiResponse(
        ChannelFailureSerializer,
        "The channel is unreachable, failed, or rejected the organization's credentials.",
    ),
    504: OpenApiResponse(ChannelFailureSerializer, "The channel did not answer in time."),
}


# The request's passed-through JSON ------------------------------------------------------


class TemplateComponentSchema(OpenApiSerializerFieldExtension):
    """A template component: checked against Meta's documented shapes, then passed to the
    channel as given."""

    target_class = "sending.api.serializers.TemplateComponentField"

    def map_serializer_field(self, auto_schema, direction):
        parameter = {
            "type": "object",
            "description": "`type` is one of "
            + ", ".join(PARAMETER_TYPES)
            + " (any case); the value goes under the key of the type's name.",
            "properties": {
                "type": {"type": "string", "minLength": 1, "example": "text"},
                "text": {"type": "string", "description": "Required when type is text."},
            },
            "required": ["type"],
            "additionalProperties": True,
        }
        return {
            "type": "object",
            "description": "`type` is one of "
            + ", ".join(COMPONENT_TYPES)
            + " (any case); a button needs `sub_type` and `index` (0-9), a carousel `cards`. "
            f"At most {TemplateComponentField.max_depth} levels inside a component, "
            f"{COMPONENTS_MAX_BYTES // 1024} KiB for the whole list, and no text a database "
            "cannot store (NUL, lone surrogates).",
            "properties": {
                "type": {"type": "string", "minLength": 1, "example": "body"},
                "parameters": {"type": "array", "items": parameter, "nullable": True},
            },
            "required": ["type"],
            "additionalProperties": True,
        }


# The views ------------------------------------------------------------------------------


def chat_schema(view):
    """The chats' list and detail, and the media file of one."""
    view = resource_schema(noun="chat", page=ChatPage, detail=ChatDetail, writable=False)(view)
    media = described(
        summary="Download the media of an inbound chat",
        success=OpenApiResponse(
            OpenApiTypes.BINARY,
            "The file, with its content type and `Content-Disposition: attachment; "
            "filename=\"...\"` (a document's own name, or the kind and the chat's uuid).",
        ),
        codes=(404,),
        # The renderer that lets `Accept: image/*` through is not a format to choose.
        extra_parameters=[OpenApiParameter("format", exclude=True)],
    )
    return extend_schema_view(media=media)(view)


class ChatViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.ChatViewSet"
    view_replacement = documented(
        chat_schema,
        "Chats: the messages sent and received. One chat also shows its status history "
        f"(`statuses`). {RESOURCE_DOC}",
    )


def send_schema(*, summary: str, request, success):
    # A send can also fail at the channel: 422, 502, 504 with `channel_error`.
    operation = described(
        summary=summary,
        success=success,
        request=request,
        codes=(403,),
        creates=True,
        extra=CHANNEL_ERRORS,
    )
    return extend_schema_view(post=operation)


SEND_DOC = (
    "Finds or creates the contact for the number and records a chat. Nothing is recorded "
    "as sent that the channel did not accept: a refusal is a 422 and a channel failure a "
    "502 or 504, each with `channel_error`, never a 200 with `success: false`."
)


class SendMessageViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.SendMessageView"
    view_replacement = documented(
        send_schema(
            summary="Send a message (text, or with 1 to 3 reply buttons)",
            request=SendMessageInputSerializer,
            success=SendResponseSerializer,
        ),
        "A text message, or with `buttons` an interactive message that may carry a "
        f"`header` and a `footer`. {SEND_DOC}",
    )


class SendTemplateViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.SendTemplateView"
    view_replacement = documented(
        send_schema(
            summary="Send a template message",
            request=SendTemplateInputSerializer,
            success=TemplateSendResponseSerializer,
        ),
        f"A template message; `components` go to the channel as given. {SEND_DOC}",
    )


class SendMediaViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.SendMediaView"
    view_replacement = documented(
        send_schema(
            summary="Send a media message (image, document, audio, video or sticker)",
            request=SendMediaInputSerializer,
            success=SendResponseSerializer,
        ),
        "A media message by link: WhatsApp fetches `media_url` (https, on a public "
        "address). A `caption` (at most 1024 characters) goes with an image, video or "
        "document, a `file_name` with a document; `first_name`, `last_name` and `email` "
        f"name a contact created for the number. {SEND_DOC}",
    )


class InteractiveSchema(OpenApiSerializerFieldExtension):
    """WhatsApp's interactive object: its limits checked, then passed on as given."""

    target_class = "sending.api.serializers.InteractiveField"

    def map_serializer_field(self, auto_schema, direction):
        return {
            "type": "object",
            "description": "WhatsApp's interactive object (docs/messages.md): `type` "
            "button, list, cta_url, location_request_message or flow, with `body.text` (at "
            "most 1,024), optional `header` (text at most 60) and `footer` (at most 60), "
            "and its `action`. Reply buttons 1-3 (ids unique, at most 256; titles at most "
            "20); a list's button at most 20, 1-10 sections, at most 10 rows in all (ids "
            "unique, titles at most 24, descriptions at most 72); a cta_url's display "
            "text at most 20 and an http(s) URL.",
            "properties": {
                "type": {"type": "string", "example": "button"},
                "body": {"type": "object", "additionalProperties": True},
                "action": {"type": "object", "additionalProperties": True},
            },
            "required": ["type", "body", "action"],
            "additionalProperties": True,
        }


class ContactCardSchema(OpenApiSerializerFieldExtension):
    target_class = "sending.api.serializers.ContactCardField"

    def map_serializer_field(self, auto_schema, direction):
        return {
            "type": "object",
            "description": "WhatsApp's contact object: `name` (with `formatted_name`), "
            "`phones`, `emails`, `addresses`, `urls`, `org`, `birthday`.",
            "properties": {"name": {"type": "object", "additionalProperties": True}},
            "required": ["name"],
            "additionalProperties": True,
        }


class SendInteractiveViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.SendInteractiveView"
    view_replacement = documented(
        send_schema(
            summary="Send an interactive message (buttons, list, URL button, location "
            "request, Flow)",
            request=SendInteractiveInputSerializer,
            success=SendResponseSerializer,
        ),
        "WhatsApp's interactive object, its limits checked before anything is sent (a 400 "
        f"names the field, such as `interactive.action.buttons.0.reply.title`). {SEND_DOC}",
    )


class SendReactionViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.SendReactionView"
    view_replacement = documented(
        send_schema(
            summary="React to a message with an emoji",
            request=SendReactionInputSerializer,
            success=SendResponseSerializer,
        ),
        "An emoji on a message (`message_id`: a chat uuid or a WhatsApp message id); an "
        f"empty `emoji` removes the reaction. {SEND_DOC}",
    )


class SendLocationViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.SendLocationView"
    view_replacement = documented(
        send_schema(
            summary="Send a location",
            request=SendLocationInputSerializer,
            success=SendResponseSerializer,
        ),
        f"A pin at `latitude`, `longitude`, with an optional `name` and `address`. {SEND_DOC}",
    )


class SendContactsViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.SendContactsView"
    view_replacement = documented(
        send_schema(
            summary="Send contact cards",
            request=SendContactsInputSerializer,
            success=SendResponseSerializer,
        ),
        f"One or more of WhatsApp's contact cards. {SEND_DOC}",
    )
