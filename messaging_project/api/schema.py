"""The OpenAPI description of the API (served at /api/schema, shown at /api/docs).

The views build their output with plain functions (`contact_data`, `chat_data`, ...),
so the shapes they return are described here by schema-only serializers, one per
shape, and attached to the views with drf-spectacular view extensions. The views
themselves carry no documentation. A test (tests/hardening/test_fuzzing.py) checks
with schemathesis that every response the service gives matches this description.
"""

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerFieldExtension,
    OpenApiViewExtension,
)
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    extend_schema_view,
)
from rest_framework import serializers

from canned_replies.api.serializers import CannedReplyInputSerializer
from canned_replies.models import MatchCriteria
from contacts.api.serializers import ContactGroupInputSerializer, ContactInputSerializer
from sending.api.serializers import SendMessageInputSerializer, SendTemplateInputSerializer
from sending.models import ChatStatus, ChatType

# Shared pieces --------------------------------------------------------------------------

LARAVEL_DATETIME = "`YYYY-MM-DD HH:MM:SS`, UTC"
ISO_DATETIME = "ISO 8601, UTC, with microseconds and `Z`"


def text(help_text: str = "", *, null: bool = False) -> serializers.CharField:
    return serializers.CharField(help_text=help_text, allow_null=null)


def integer(help_text: str = "", *, null: bool = False) -> serializers.IntegerField:
    return serializers.IntegerField(help_text=help_text, allow_null=null)


@extend_schema_field({"description": "Always null: media is not supported yet.", "nullable": True})
class AlwaysNullField(serializers.Field):
    pass


@extend_schema_field({"description": "Any JSON value, as the channel gave it.", "nullable": True})
class AnyJsonField(serializers.Field):
    pass


class ErrorSerializer(serializers.Serializer):
    """The error envelope every error under /api/ has."""

    statusCode = integer("The HTTP status again.")  # noqa: N815 (the wire name)
    message = text("A sentence for a human.")


class ValidationErrorSerializer(ErrorSerializer):
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Messages by field; nested fields use dotted paths (`buttons.0.title`). "
        "Absent when the body is not a JSON object (`Malformed JSON body.`).",
    )


class ChannelErrorSerializer(serializers.Serializer):
    code = integer("Graph's error code (for example 131047), or null.", null=True)
    type = text("Graph's error type, or ours (`timeout`, `unreachable`).", null=True)
    message = text(null=True)
    details = AnyJsonField()
    fbtrace_id = text(null=True)


class ChannelFailureSerializer(ErrorSerializer):
    channel_error = ChannelErrorSerializer()


class SendRefusedSerializer(ErrorSerializer):
    channel_error = ChannelErrorSerializer(
        required=False, help_text="Present when the channel refused the message."
    )


class WriteResultSerializer(serializers.Serializer):
    """What create, edit and delete answer."""

    statusCode = integer("200")  # noqa: N815
    id = serializers.UUIDField(help_text="The uuid of the record written.")
    message = text("`Request processed successfully`")


# The Laravel page -----------------------------------------------------------------------


class PageLinksSerializer(serializers.Serializer):
    first = serializers.URLField(help_text="Absolute URL of page 1.")
    last = serializers.URLField(help_text="Absolute URL of the last page.")
    prev = serializers.URLField(allow_null=True, help_text="Null on the first page.")
    next = serializers.URLField(allow_null=True, help_text="Null on the last page.")


class PageWindowLinkSerializer(serializers.Serializer):
    url = serializers.URLField(allow_null=True)
    label = text("`&laquo; Previous`, a page number, `...`, or `Next &raquo;`.")
    active = serializers.BooleanField(help_text="True only on the current page's entry.")


class PageMetaSerializer(serializers.Serializer):
    current_page = integer()
    # `from` is a Python keyword, hence the explicit field names below.
    last_page = integer()
    links = PageWindowLinkSerializer(many=True)
    path = serializers.URLField(help_text="The list's absolute URL without the page parameter.")
    per_page = integer()
    total = integer()

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = integer("Position of the page's first record; null when empty.", null=True)
        fields["to"] = integer("Position of the page's last record; null when empty.", null=True)
        return fields


def page_of(record: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """The Laravel page of a resource: `data` (its records), `links` and `meta`."""
    page = type(
        name,
        (serializers.Serializer,),
        {
            "data": record(many=True),
            "links": PageLinksSerializer(),
            "meta": PageMetaSerializer(),
            "__doc__": f"A Laravel page of {record.__name__.removesuffix('RecordSerializer')}s.",
        },
    )
    # The page is the whole body: drf-spectacular must not wrap it in a list again.
    return extend_schema_serializer(many=False)(page)


def detail_of(record: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """`{"data": <record>}`, the body of `GET /api/<resource>/{uuid}`."""
    return type(name, (serializers.Serializer,), {"data": record()})


# Records: what the represent functions return -------------------------------------------


# What every stored record starts with. (No docstring: it would become the description
# of the subclasses that have none.)
class RecordSerializer(serializers.Serializer):
    id = integer()
    uuid = serializers.UUIDField()
    organization_id = integer()


class ContactRecordSerializer(RecordSerializer):
    """A contact as `contacts.api.serializers.contact_data` writes it."""

    first_name = text(null=True)
    last_name = text(null=True)
    phone = text("Digits only, country code first, no plus.")
    email = text(null=True)
    avatar = text(null=True)
    address = text(
        "A JSON-encoded object with street, city, state, zip and country (each a string "
        "or null), or null.",
        null=True,
    )
    contact_group_id = integer(null=True)
    is_favorite = serializers.ChoiceField(choices=[0, 1])
    created_by = integer("0 for records written through the API.")
    created_at = text(LARAVEL_DATETIME, null=True)
    updated_at = text(LARAVEL_DATETIME, null=True)
    deleted_at = text(LARAVEL_DATETIME, null=True)
    full_name = text("First and last name joined by one space.")


class ContactGroupRecordSerializer(RecordSerializer):
    name = text()
    created_by = integer()
    created_at = text(ISO_DATETIME)
    updated_at = text(ISO_DATETIME)
    deleted_at = text(ISO_DATETIME, null=True)


class CannedReplyRecordSerializer(RecordSerializer):
    """The stored form: the request's `response_type` and `response` become `metadata`."""

    name = text()
    trigger = text()
    match_criteria = serializers.ChoiceField(choices=MatchCriteria.choices)
    metadata = text('JSON-encoded: `{"type": "text", "data": {"text": "<response>"}}`.')
    created_by = integer()
    deleted_by = integer(null=True)
    deleted_at = text(LARAVEL_DATETIME, null=True)
    created_at = text(LARAVEL_DATETIME)
    updated_at = text(LARAVEL_DATETIME)


class TemplateChatRecordSerializer(RecordSerializer):
    """The chat in a template send's answer: no contact and no deletion fields."""

    wam_id = text("The channel's message id.", null=True)
    contact_id = integer()
    type = serializers.ChoiceField(choices=ChatType.choices)
    metadata = text("JSON-encoded description of the message.", null=True)
    media_id = integer(null=True)
    status = serializers.ChoiceField(choices=ChatStatus.choices)
    created_at = text(LARAVEL_DATETIME)
    media = AlwaysNullField()


class SentChatRecordSerializer(TemplateChatRecordSerializer):
    """The chat in a send's answer (`sending.api.serializers.chat_data`)."""

    deleted_by = integer(null=True)
    deleted_at = text(LARAVEL_DATETIME, null=True)
    contact = ContactRecordSerializer()


class ChatFailureSerializer(serializers.Serializer):
    code = integer(null=True)
    message = text(null=True)
    details = AnyJsonField()


class ChatRecordSerializer(SentChatRecordSerializer):
    """A chat in /api/chats: the send's chat, and why it failed when it did."""

    error = ChatFailureSerializer(allow_null=True, help_text="Null unless the status is failed.")


class ChatStatusEventSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=ChatStatus.choices)
    timestamp = text(LARAVEL_DATETIME, null=True)
    error_code = integer(null=True)
    error_title = text(null=True)


class ChatDetailRecordSerializer(ChatRecordSerializer):
    statuses = ChatStatusEventSerializer(many=True, help_text="Status updates, oldest first.")


class TemplateRecordSerializer(RecordSerializer):
    name = text()
    language = text()
    category = text()
    status = text()
    components = AnyJsonField()
    external_id = text()
    created_at = text(LARAVEL_DATETIME)
    updated_at = text(LARAVEL_DATETIME)


class WhoAmISerializer(serializers.Serializer):
    organization_id = integer()
    organization_uuid = serializers.UUIDField()
    organization_name = text()
    token = text("The token's public prefix.")


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
    chat = TemplateChatRecordSerializer()


class SendOutcomeSerializer(serializers.Serializer):
    success = serializers.BooleanField(help_text="Always true: failures are HTTP errors.")
    data = SendResultSerializer()


class TemplateSendOutcomeSerializer(serializers.Serializer):
    success = serializers.BooleanField(help_text="Always true: failures are HTTP errors.")
    data = TemplateSendResultSerializer()


class SendResponseSerializer(serializers.Serializer):
    statusCode = integer("200")  # noqa: N815
    data = SendOutcomeSerializer()


class TemplateSendResponseSerializer(serializers.Serializer):
    statusCode = integer("200")  # noqa: N815
    data = TemplateSendOutcomeSerializer()


# Request bodies that differ from the input serializers' defaults ------------------------


class ContactEditSerializer(ContactInputSerializer):
    """An edit changes only the fields sent, so none is required."""

    def __init__(self, *args, **kwargs):
        kwargs["partial"] = True
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class ContactGroupEditSerializer(ContactGroupInputSerializer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False


class CannedReplyEditSerializer(CannedReplyInputSerializer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


# Responses by status --------------------------------------------------------------------

ERRORS = {
    400: OpenApiResponse(
        ValidationErrorSerializer,
        "The body or a query parameter is invalid (`The given data was invalid.` with "
        "`errors`), or the body is not a JSON object (`Malformed JSON body.`).",
    ),
    401: OpenApiResponse(
        ErrorSerializer,
        "`Unauthorized. Bearer Token is missing.` or `Unauthorized. Invalid Bearer Token.`, "
        "with `WWW-Authenticate: Bearer`.",
    ),
    403: OpenApiResponse(
        ErrorSerializer,
        "`Please setup your whatsapp account!`: the organization's channel cannot send.",
    ),
    404: OpenApiResponse(
        ErrorSerializer,
        "`Not found.`: unknown, deleted or another organization's uuid.",
    ),
    409: OpenApiResponse(
        ErrorSerializer,
        "A request with the same `Idempotency-Key` is still running.",
    ),
    413: OpenApiResponse(ErrorSerializer, "`The request body is too large.` (over 256 KiB)."),
    415: OpenApiResponse(ErrorSerializer, "The body is not `application/json`."),
    429: OpenApiResponse(
        ErrorSerializer,
        "`Too Many Attempts.`: the organization's rate limit, or too many failed "
        "authentications from this address. See `Retry-After`.",
    ),
    503: OpenApiResponse(
        ErrorSerializer,
        "The database was unreachable for a moment; retry after `Retry-After` seconds.",
    ),
}
IDEMPOTENCY_CONFLICT = OpenApiResponse(
    ErrorSerializer, "The `Idempotency-Key` was already used with a different body."
)
CHANNEL_ERRORS = {
    422: OpenApiResponse(
        SendRefusedSerializer,
        "The channel refused the message (Graph's own text, for example outside the "
        "24-hour window), or the `Idempotency-Key` was already used with another body.",
    ),
    502: OpenApiResponse(
        ChannelFailureSerializer,
        "The channel is unreachable, failed, or rejected the organization's credentials.",
    ),
    504: OpenApiResponse(ChannelFailureSerializer, "The channel did not answer in time."),
}

# Every answer to an authenticated request carries the organization's rate-limit state.
RATE_LIMITED = [200, 400, 403, 404, 409, 415, 422, 429, 502, 503, 504]
HEADERS = [
    OpenApiParameter(
        "X-RateLimit-Limit",
        OpenApiTypes.INT,
        OpenApiParameter.HEADER,
        response=RATE_LIMITED,
        description="Requests allowed per minute for the organization.",
    ),
    OpenApiParameter(
        "X-RateLimit-Remaining",
        OpenApiTypes.INT,
        OpenApiParameter.HEADER,
        response=RATE_LIMITED,
        description="Requests left in this minute.",
    ),
    OpenApiParameter(
        "Retry-After",
        OpenApiTypes.INT,
        OpenApiParameter.HEADER,
        response=[429, 503],
        description="Seconds to wait before retrying.",
    ),
    OpenApiParameter(
        "X-RateLimit-Reset",
        OpenApiTypes.INT,
        OpenApiParameter.HEADER,
        response=[429],
        description="When the window ends, in epoch seconds (the organization's limit only).",
    ),
]
IDEMPOTENCY_HEADERS = [
    OpenApiParameter(
        "Idempotency-Key",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        description="Optional. A retry with the same key and body within 24 hours gets the "
        "first answer again instead of running twice. 1 to 255 printable ASCII characters.",
        pattern=r"^[\x20-\x7e]{1,255}$",
    ),
    OpenApiParameter(
        "Idempotent-Replayed",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        response=[200, 422, 502, 504],
        description="`true` when the answer is the stored one for an `Idempotency-Key`.",
    ),
]
PAGE_PARAMETERS = [
    OpenApiParameter(
        "page", OpenApiTypes.INT, description="Page number, from 1 (1 to 1,000,000,000)."
    ),
    OpenApiParameter("per_page", OpenApiTypes.INT, description="Records per page, 1 to 100."),
]


def described(
    *,
    summary: str,
    success,
    codes=(),
    request=None,
    creates=False,
    list_=False,
    extra=None,
    extra_parameters=(),
):
    """extend_schema for one operation: its success answer and the errors it can give.
    Every operation can answer 401 (token), 429 (rate limit) and 503 (database gone for
    a moment); one with a body 400, 413 and 415; a create or send takes Idempotency-Key."""
    extra = dict(extra or {})
    parameters = list(HEADERS)
    if request is not None:
        codes = (*codes, 400, 413, 415)
    if creates:
        codes = (*codes, 409)
        parameters += IDEMPOTENCY_HEADERS
        extra.setdefault(422, IDEMPOTENCY_CONFLICT)
    if list_:
        codes = (*codes, 400)
        parameters += PAGE_PARAMETERS
    parameters += extra_parameters
    found = {200: success, **{code: ERRORS[code] for code in {*codes, 401, 429, 503}}}
    found.update(extra)
    return extend_schema(
        summary=summary,
        request=request,
        responses=dict(sorted(found.items())),
        parameters=parameters,
    )


def without_trailing_slash(endpoints, **kwargs):
    """Paths as api.md writes them (`/api/contacts`); the router accepts both spellings."""
    return [(path.rstrip("/"), *rest) for path, *rest in endpoints]


# The views ------------------------------------------------------------------------------


def resource_schema(
    *,
    noun: str,
    page,
    detail,
    input_serializer=None,
    edit_serializer=None,
    writable: bool = True,
    filters=(),
):
    """list and retrieve for every resource; create, edit and delete for writable ones."""
    views = {
        "list": described(
            summary=f"List {noun}s", success=page, list_=True, extra_parameters=filters
        ),
        "retrieve": described(summary=f"Show a {noun}", success=detail, codes=(404,)),
    }
    if writable:
        views.update(
            create=described(
                summary=f"Create a {noun}",
                success=WriteResultSerializer,
                request=input_serializer,
                creates=True,
            ),
            update=described(
                summary=f"Edit a {noun} (only the fields sent change)",
                success=WriteResultSerializer,
                request=edit_serializer,
                codes=(404,),
            ),
            partial_update=described(
                summary=f"Edit a {noun} (same as PUT)",
                success=WriteResultSerializer,
                request=edit_serializer,
                codes=(404,),
            ),
            destroy=described(
                summary=f"Delete a {noun} (soft)",
                success=WriteResultSerializer,
                codes=(404,),
            ),
        )
    return extend_schema_view(**views)


def documented(decorator, doc: str):
    """An OpenApiViewExtension's replacement: a subclass of the view, documented, with
    `doc` (Markdown) as the description of its operations."""

    def view_replacement(self):
        return decorator(type(self.target_class.__name__, (self.target_class,), {"__doc__": doc}))

    return view_replacement


class TemplateComponentSchema(OpenApiSerializerFieldExtension):
    """A template component: checked for shape only and passed to the channel as given."""

    target_class = "sending.api.serializers.TemplateComponentField"

    def map_serializer_field(self, auto_schema, direction):
        parameter = {
            "type": "object",
            "properties": {
                "type": {"type": "string", "minLength": 1, "example": "text"},
                "text": {"type": "string", "description": "Required when type is text."},
            },
            "required": ["type"],
            "additionalProperties": True,
        }
        return {
            "type": "object",
            "properties": {
                "type": {"type": "string", "minLength": 1, "example": "body"},
                "parameters": {"type": "array", "items": parameter, "nullable": True},
            },
            "required": ["type"],
            "additionalProperties": True,
        }


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Bearer"
        )


RESOURCE_DOC = (
    "Lists are Laravel pages: `page` and `per_page` select the page, `ordering` takes "
    "listed fields with an optional `-`, and every record belongs to the token's "
    "organization; another organization's uuid is a 404."
)


class ContactViewSchema(OpenApiViewExtension):
    target_class = "contacts.api.views.ContactViewSet"
    view_replacement = documented(
        resource_schema(
            noun="contact",
            page=page_of(ContactRecordSerializer, "ContactPage"),
            detail=detail_of(ContactRecordSerializer, "ContactDetail"),
            input_serializer=ContactInputSerializer,
            edit_serializer=ContactEditSerializer,
            # django-filter's description would call this a boolean with string values.
            filters=[OpenApiParameter("is_favorite", OpenApiTypes.STR, enum=["0", "1"])],
        ),
        f"Contacts. The request sends `phone` with a leading plus; the record holds digits "
        f"only. {RESOURCE_DOC}",
    )


class ContactGroupViewSchema(OpenApiViewExtension):
    target_class = "contacts.api.views.ContactGroupViewSet"
    view_replacement = documented(
        resource_schema(
            noun="contact group",
            page=page_of(ContactGroupRecordSerializer, "ContactGroupPage"),
            detail=detail_of(ContactGroupRecordSerializer, "ContactGroupDetail"),
            input_serializer=ContactGroupInputSerializer,
            edit_serializer=ContactGroupEditSerializer,
        ),
        f"Contact groups. Deleting a group detaches its contacts. {RESOURCE_DOC}",
    )


class CannedReplyViewSchema(OpenApiViewExtension):
    target_class = "canned_replies.api.views.CannedReplyViewSet"
    view_replacement = documented(
        resource_schema(
            noun="canned reply",
            page=page_of(CannedReplyRecordSerializer, "CannedReplyPage"),
            detail=detail_of(CannedReplyRecordSerializer, "CannedReplyDetail"),
            input_serializer=CannedReplyInputSerializer,
            edit_serializer=CannedReplyEditSerializer,
        ),
        "Canned replies. Requests send `response_type` and `response`; the stored and "
        "listed form has them as `metadata`, a JSON-encoded "
        '`{"type": "text", "data": {"text": "<response>"}}`. `match_criteria` accepts '
        f"`exact_match` for `exact match`. {RESOURCE_DOC}",
    )


class ChatViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.ChatViewSet"
    view_replacement = documented(
        resource_schema(
            noun="chat",
            page=page_of(ChatRecordSerializer, "ChatPage"),
            detail=detail_of(ChatDetailRecordSerializer, "ChatDetail"),
            writable=False,
        ),
        "Chats: the messages sent and received. One chat also shows its status history "
        f"(`statuses`). {RESOURCE_DOC}",
    )


class MessageTemplateViewSchema(OpenApiViewExtension):
    target_class = "sending.api.views.MessageTemplateViewSet"
    view_replacement = documented(
        resource_schema(
            noun="message template",
            page=page_of(TemplateRecordSerializer, "MessageTemplatePage"),
            detail=detail_of(TemplateRecordSerializer, "MessageTemplateDetail"),
            writable=False,
        ),
        f"The organization's WhatsApp templates, as last synced. {RESOURCE_DOC}",
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


class WhoAmIViewSchema(OpenApiViewExtension):
    target_class = "messaging_project.api.views.WhoAmIView"
    view_replacement = documented(
        extend_schema_view(
            get=described(
                summary="The token's organization",
                success=detail_of(WhoAmISerializer, "WhoAmIDetail"),
            )
        ),
        "A cheap way to check a token.",
    )
