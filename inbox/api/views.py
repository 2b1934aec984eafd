"""Conversations over the API (docs/inbox.md). Thin: validate, call the service or the
selector, shape. API tokens are the organization's, not a staff member's: no role
applies here, and notes written here have no author."""

from uuid import UUID

from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from inbox import selectors, services
from inbox.api.pagination import ConversationPagination
from inbox.api.serializers import (
    ConversationEditSerializer,
    ConversationFilterSerializer,
    ConversationMessageInputSerializer,
    NoteInputSerializer,
)
from inbox.representations import conversation_data, note_data
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationViewSet
from sending.api.views import channel_errors, send_response
from sending.models import Conversation
from sending.representations import chat_data, chat_records

FILTERS = frozenset(ConversationFilterSerializer().fields)


class ConversationViewSet(OrganizationViewSet):
    queryset = Conversation.objects.select_related("contact", "number", "assignee")
    represent = staticmethod(conversation_data)
    pagination_class = ConversationPagination
    whole_list = False  # the list without a filter: its total is kept, not counted

    def list(self, request, *args, **kwargs):
        given = {}
        # Without a filter's name in the query string there is nothing to validate.
        if FILTERS.intersection(request.query_params):
            filters = ConversationFilterSerializer(data=request.query_params)
            filters.is_valid(raise_exception=True)
            # A query string's absent boolean reads as false (DRF's form input): no filter.
            given = {k: v for k, v in filters.validated_data.items() if v not in (None, "", False)}
        self.whole_list = not given
        # The whole list is read by the pagination's own query (inbox.queries): no queryset.
        conversations = (
            None
            if self.whole_list
            else selectors.conversations_for(organization=self.organization, **given)
        )
        page = self.paginate_queryset(conversations)
        return self.get_paginated_response([conversation_data(c) for c in page])

    def get_object(self):
        conversation = super().get_object()
        conversation.organization = self.organization  # the sends need it: no query
        return conversation

    def partial_update(self, request, uuid=None):
        conversation = self.get_object()
        changes = ConversationEditSerializer(data=request.data)
        changes.is_valid(raise_exception=True)
        conversation = services.update_conversation(
            conversation=conversation, **changes.validated_data
        )
        return Response({"data": conversation_data(conversation)})

    @action(detail=True, methods=["get", "post"])
    def messages(self, request, uuid=None):
        if request.method == "POST":
            return self.send(request)
        try:
            conversation_uuid = UUID(str(uuid))
        except ValueError:
            raise NotFound() from None
        chats = self.paginator.read_with_total(
            request,
            lambda offset, limit: selectors.message_page(
                organization_id=self.organization.pk,
                conversation_uuid=conversation_uuid,
                offset=offset,
                limit=limit,
            ),
        )
        if chats is None:
            raise NotFound()
        return self.get_paginated_response(chat_records(chats))

    @idempotent
    def send(self, request):
        conversation = self.get_object()
        given = ConversationMessageInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        with channel_errors():
            result = services.send_in_conversation(
                conversation=conversation, **given.validated_data
            )
        # One shape whatever was sent: /api/send's.
        return send_response(result, chat=chat_data(result.chat), template=False)

    @action(detail=True, methods=["get", "post"])
    def notes(self, request, uuid=None):
        conversation = self.get_object()
        if request.method == "POST":
            body = NoteInputSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            note = services.add_note(conversation=conversation, body=body.validated_data["body"])
            return Response({"data": note_data(note)})
        page = self.paginate_queryset(selectors.notes_of(conversation))
        return self.get_paginated_response([note_data(note) for note in page])

    @action(detail=True, methods=["post"])
    def read(self, request, uuid=None):
        conversation = services.mark_read(conversation=self.get_object())
        return Response({"data": conversation_data(conversation)})
