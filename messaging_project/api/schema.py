"""The OpenAPI description's shared, app-free parts (served at /api/schema, shown at /api/docs).

(Over 400 lines: the shared envelope and field descriptions every app's schema builds on.)

The views build their output with plain functions (each app's representations.py:
`contact_data`, `chat_data`, ...), so the shapes they return are described by
schema-only serializers, one per shape, and attached to the views with drf-spectacular
view extensions. The views themselves carry
no documentation. Each app describes its own shapes and views in its `api/schema.py`,
imported by its AppConfig.ready() so that the extensions exist whenever a schema is
generated; tests beside each app check that a data function's keys are the documented
fields. This module holds what they share: the error envelopes, the write result, the
Laravel page and detail wrappers, the field helpers, the errors and headers of every
operation, the bearer-token scheme, and `/api/me`, whose view lives in this layer. It
imports no app (the apps build on it); messaging_project/urls.py imports it.

A test (tests/hardening/test_fuzzing.py) checks with schemathesis that every response
the service gives matches the description.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiViewExtension
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

# Shared pieces --------------------------------------------------------------------------

LARAVEL_DATETIME = "`YYYY-MM-DD HH:MM:SS`, UTC"
ISO_DATETIME = "ISO 8601, UTC, with microseconds and `Z`"


def text(help_text: str = "", *, null: bool = False) -> serializers.CharField:
    return serializers.CharField(help_text=help_text, allow_null=null)


def integer(help_text: str = "", *, null: bool = False) -> serializers.IntegerField:
    return serializers.IntegerField(help_text=help_text, allow_null=null)


@extend_schema_field({"description": "Any JSON value, as the channel gave it.", "nullable": True})
class AnyJsonField(serializers.Field):
    pass


@extend_schema_field(
    {
        "oneOf": [{"type": "integer"}, {"type": "string"}],
        "nullable": True,
        "description": "Graph's error code (for example 131047), the service's own for a "
        "send it refused before calling the channel (`template_not_approved`), or null.",
    }
)
class ChannelErrorCodeField(serializers.Field):
    pass


class ErrorSerializer(serializers.Serializer):
    """The error envelope every error under /api/ has."""

    statusCode = integer("The HTTP status again.")  # noqa: N815 (the wire name)
    message = text("A sentence for a human.")


class ValidationErrorSerializer(ErrorSerializer):
    # A declared field, which DRF's metaclass takes out of the class: no clash with
    # Serializer.errors, which the stubs cannot tell.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Messages by field; nested fields use dotted paths (`buttons.0.title`). "
        "Absent when the body is not a JSON object (`Malformed JSON body.`).",
    )
    error = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="The same as `errors`, for clients of the original product; only when "
        "`page` or `per_page` is invalid.",
    )


class UnauthorizedSerializer(ErrorSerializer):
    error = text("The same as `message`, for clients of the original product.")


class ChannelErrorSerializer(serializers.Serializer):
    code = ChannelErrorCodeField()
    type = text("Graph's error type, or ours (`timeout`, `unreachable`).", null=True)
    message = text(null=True)
    details = AnyJsonField()
    fbtrace_id = text(null=True)


class ChannelFailureSerializer(ErrorSerializer):
    channel_error = ChannelErrorSerializer()


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
    # A declared field, which DRF's metaclass takes out of the class: not Field.label.
    label = text("`&laquo; Previous`, a page number, `...`, or `Next &raquo;`.")  # type: ignore[assignment]
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


# Records: what the apps' data functions return ------------------------------------------


# What every stored record starts with. (No docstring: it would become the description
# of the subclasses that have none.)
class RecordSerializer(serializers.Serializer):
    id = integer()
    uuid = serializers.UUIDField()
    organization_id = integer()


# Responses by status --------------------------------------------------------------------

ERRORS = {
    400: OpenApiResponse(
        ValidationErrorSerializer,
        "The body or a query parameter is invalid (`The given data was invalid.` with "
        "`errors`), or the body is not a JSON object (`Malformed JSON body.`).",
    ),
    401: OpenApiResponse(
        UnauthorizedSerializer,
        "`Unauthorized. Bearer Token is missing.` or `Unauthorized. Invalid Bearer Token.` "
        "(also as `error`), with `WWW-Authenticate: Bearer`.",
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
    description=None,
    methods=None,
):
    """extend_schema for one operation: its success answer and the errors it can give.
    Every operation can answer 401 (token), 429 (rate limit) and 503 (database gone for
    a moment); one with a body 400, 413 and 415; a create or send takes Idempotency-Key.
    `methods`: the one it describes, for an action that answers several."""
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
        methods=methods,
        summary=summary,
        description=description,
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
    conflicts=(),
):
    """list and retrieve for every resource; create, edit and delete for writable ones;
    `conflicts`: the writes ("create", "update", "destroy") that may answer 409."""
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
                codes=(404, 409) if "update" in conflicts else (404,),
            ),
            partial_update=described(
                summary=f"Edit a {noun} (same as PUT)",
                success=WriteResultSerializer,
                request=edit_serializer,
                codes=(404, 409) if "update" in conflicts else (404,),
            ),
            destroy=described(
                summary=f"Delete a {noun} (soft)",
                success=WriteResultSerializer,
                codes=(404, 409) if "destroy" in conflicts else (404,),
            ),
        )
    return extend_schema_view(**views)


def documented(decorator, doc: str):
    """An OpenApiViewExtension's replacement: a subclass of the view, documented, with
    `doc` (Markdown) as the description of its operations."""

    def view_replacement(self):
        return decorator(type(self.target_class.__name__, (self.target_class,), {"__doc__": doc}))

    return view_replacement


class BearerTokenScheme(OpenApiAuthenticationExtension):
    # Named by its path, not imported: this layer imports no app.
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


# /api/me --------------------------------------------------------------------------------


class WhoAmISerializer(serializers.Serializer):
    organization_id = integer()
    organization_uuid = serializers.UUIDField()
    organization_name = text()
    token = text("The token's public prefix.")


WhoAmIDetail = detail_of(WhoAmISerializer, "WhoAmIDetail")


class WhoAmIViewSchema(OpenApiViewExtension):
    target_class = "messaging_project.api.views.WhoAmIView"
    view_replacement = documented(
        extend_schema_view(
            get=described(
                summary="The token's organization",
                success=WhoAmIDetail,
            )
        ),
        "A cheap way to check a token.",
    )
