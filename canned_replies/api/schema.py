"""The OpenAPI description of canned replies: the record that `canned_reply_data`
returns, the edit body, and the viewset.

drf-spectacular finds the view extension below only once this module is imported:
CannedRepliesConfig.ready() imports it, so it is loaded wherever Django is set up. The
shared pieces are in messaging_project/api/schema.py;
tests/canned_replies/test_documented_shapes.py checks that `canned_reply_data` returns
exactly the fields documented here.
"""

from drf_spectacular.extensions import OpenApiViewExtension
from rest_framework import serializers

from canned_replies.api.serializers import CannedReplyInputSerializer
from canned_replies.models import MatchCriteria
from messaging_project.api.schema import (
    LARAVEL_DATETIME,
    RESOURCE_DOC,
    RecordSerializer,
    detail_of,
    documented,
    integer,
    page_of,
    resource_schema,
    text,
)


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


CannedReplyPage = page_of(CannedReplyRecordSerializer, "CannedReplyPage")
CannedReplyDetail = detail_of(CannedReplyRecordSerializer, "CannedReplyDetail")


class CannedReplyEditSerializer(CannedReplyInputSerializer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class CannedReplyViewSchema(OpenApiViewExtension):
    target_class = "canned_replies.api.views.CannedReplyViewSet"
    view_replacement = documented(
        resource_schema(
            noun="canned reply",
            page=CannedReplyPage,
            detail=CannedReplyDetail,
            input_serializer=CannedReplyInputSerializer,
            edit_serializer=CannedReplyEditSerializer,
        ),
        "Canned replies. Requests send `response_type` and `response`; the stored and "
        "listed form has them as `metadata`, a JSON-encoded "
        '`{"type": "text", "data": {"text": "<response>"}}`. `match_criteria` accepts '
        "`exact_match` for `exact match`; `button` matches the exact id of a tapped "
        "button or list row (or a quick-reply payload), and commas in a trigger separate "
        "alternatives. An `interactive` response is the JSON text of WhatsApp's "
        "interactive object, checked with the limits of POST /api/send/interactive "
        f"(docs/canned-replies.md). {RESOURCE_DOC}",
    )
