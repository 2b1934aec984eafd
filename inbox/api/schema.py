"""The OpenAPI description of conversations: the records that `conversation_data` and
`note_data` return, and the viewset's operations.

InboxConfig.ready() imports this module so drf-spectacular finds the extension;
tests/inbox/test_api.py checks the data functions return exactly these fields.
"""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_view
from rest_framework import serializers

from contacts.api.schema import ContactRecordSerializer
from inbox.api.serializers import (
    ConversationEditSerializer,
    ConversationMessageInputSerializer,
    NoteInputSerializer,
)
from inbox.selectors import NOBODY
from messaging_project.api.schema import (
    ISO_DATETIME,
    described,
    detail_of,
    documented,
    integer,
    page_of,
    text,
)
from sending.api.schema import CHANNEL_ERRORS, ChatPage, SendResponseSerializer
from sending.models import ConversationStatus


class ConversationRecordSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    contact = ContactRecordSerializer()
    number = serializers.UUIDField(help_text="The organization's number (docs/numbers.md).")
    status = text("One of: " + ", ".join(ConversationStatus.values) + ".")
    assignee = text("The staff member's username; null when unassigned.", null=True)
    labels = serializers.ListField(child=text())
    unread = integer("Inbound messages since staff last read it.")
    last_message_at = text(ISO_DATETIME, null=True)
    last_inbound_at = text(ISO_DATETIME + "; null when the customer never wrote.", null=True)
    window_expires_at = text(
        ISO_DATETIME + ": 24 hours after the last inbound message; null when there is none.",
        null=True,
    )
    created_at = text(ISO_DATETIME)


class NoteRecordSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    body = text()
    author = text("The staff member's username; null when written through the API.", null=True)
    created_at = text(ISO_DATETIME)


ConversationPage = page_of(ConversationRecordSerializer, "ConversationPage")
ConversationDetail = detail_of(ConversationRecordSerializer, "ConversationDetail")
NotePage = page_of(NoteRecordSerializer, "NotePage")
NoteDetail = detail_of(NoteRecordSerializer, "NoteDetail")

FILTERS = [
    OpenApiParameter(
        "status", OpenApiTypes.STR, enum=ConversationStatus.values, description="Only these."
    ),
    OpenApiParameter(
        "assignee",
        OpenApiTypes.STR,
        description=f"A staff member's username, or `{NOBODY}` for the unassigned.",
    ),
    OpenApiParameter(
        "unread", OpenApiTypes.BOOL, description="`true`: only those with unread messages."
    ),
    OpenApiParameter("label", OpenApiTypes.STR, description="Only those with this label."),
    OpenApiParameter(
        "search",
        OpenApiTypes.STR,
        description="Words in the contact's first or last name, or digits of their number.",
    ),
]


SEND = described(
    methods=["POST"],
    summary="Send in a conversation (text, template or media)",
    description=(
        "To the conversation's contact, from the conversation's number; answered as "
        "`/api/send` answers, whatever was sent. Anything but a template while the "
        "24-hour window is closed is a 422 with `channel_error.code` `131047`, and WhatsApp "
        "is not called."
    ),
    success=SendResponseSerializer,
    request=ConversationMessageInputSerializer,
    codes=(403, 404),
    creates=True,
    extra=CHANNEL_ERRORS,
)


class ConversationViewSchema(OpenApiViewExtension):
    target_class = "inbox.api.views.ConversationViewSet"
    view_replacement = documented(
        extend_schema_view(
            list=described(
                summary="List conversations, newest message first",
                success=ConversationPage,
                list_=True,
                extra_parameters=FILTERS,
            ),
            retrieve=described(
                summary="Show a conversation", success=ConversationDetail, codes=(404,)
            ),
            partial_update=described(
                summary="Change a conversation's status, assignee or labels",
                description=(
                    "Only the fields sent change. An assignee who is not a staff member of "
                    "the organization is a 400. Two changes at once: an assignee set by "
                    "another request meanwhile is kept (both answers show it), and a "
                    "conversation a customer wrote in meanwhile stays open."
                ),
                success=ConversationDetail,
                request=ConversationEditSerializer,
                codes=(404,),
            ),
            messages=[
                described(
                    methods=["GET"],
                    summary="List a conversation's messages, newest first",
                    success=ChatPage,
                    list_=True,
                    codes=(404,),
                ),
                SEND,
            ],
            notes=[
                described(
                    methods=["GET"],
                    summary="List a conversation's internal notes, newest first",
                    success=NotePage,
                    list_=True,
                    codes=(404,),
                ),
                described(
                    methods=["POST"],
                    summary="Add an internal note (never sent to the customer)",
                    success=NoteDetail,
                    request=NoteInputSerializer,
                    codes=(404,),
                ),
            ],
            read=described(
                summary="Mark a conversation read (`unread` becomes 0)",
                success=ConversationDetail,
                codes=(404,),
            ),
        ),
        "Conversations: an organization's thread with one contact on one of its numbers, "
        "with its status, assignee, labels and unread count (docs/inbox.md).",
    )
