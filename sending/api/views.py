"""Sending, chats and templates over the API. Thin: validate, call the service, shape."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.files.storage import default_storage
from django.http import FileResponse
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from business_numbers.api.errors import channel_error, channel_failure
from business_numbers.gateway import ChannelNotConfigured
from business_numbers.gateway.base import NOT_CONFIGURED
from business_numbers.services import TemplateNotApproved
from messaging_project.api.exceptions import ApiError
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationScopedMixin, OrganizationViewSet
from sending import services
from sending.api.filters import ChatFilter
from sending.api.serializers import (
    SendContactsInputSerializer,
    SendInteractiveInputSerializer,
    SendLocationInputSerializer,
    SendMediaInputSerializer,
    SendMessageInputSerializer,
    SendReactionInputSerializer,
    SendTemplateInputSerializer,
)
from sending.models import Chat, MediaState
from sending.representations import (
    chat_data,
    chat_detail,
    chat_record,
    send_response_data,
)
from sending.services.media import download_name

NOT_RECORDED = (
    "The message may have been sent, but the service could not record the outcome because "
    "its database is unavailable. Do not resend it blindly: a resend may reach the "
    "recipient twice."
)


@contextmanager
def channel_errors() -> Iterator[None]:
    """The contract's answers for a channel that cannot send or did not accept, and for a
    send whose outcome could not be recorded (a 503 without Retry-After, with what the
    channel said: its message id, or its error)."""
    try:
        yield
    except ChannelNotConfigured:
        raise ApiError(403, NOT_CONFIGURED) from None
    except (TemplateNotApproved, services.ServiceWindowClosed) as refused:
        # Refused before the channel was called, in the shape of the channel's refusals.
        raise ApiError(422, refused.message, channel_error=refused.channel_error) from None
    except services.SendFailed as failed:
        raise channel_failure(failed.error) from None
    except services.SendNotRecorded as unknown:
        known: dict[str, Any] = {"wam_id": unknown.wam_id} if unknown.wam_id else {}
        if unknown.error is not None:
            known["channel_error"] = channel_error(unknown.error)
        raise ApiError(503, NOT_RECORDED, **known) from None


def send_response(result: services.SendResult, *, chat: dict[str, Any], template: bool) -> Response:
    return Response(
        {
            "statusCode": 200,
            "data": send_response_data(
                result.chat,
                phone_input=result.phone_input,
                wa_id=result.wa_id,
                chat=chat,
                message_status=template,
                messaging_product=result.answer.get("messaging_product", "whatsapp"),
            ),
        }
    )


class SendMessageView(OrganizationScopedMixin, APIView):
    """`POST /api/send`: a text, or an interactive message with reply buttons."""

    @idempotent
    def post(self, request):
        serializer = SendMessageInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with channel_errors():
            result = services.send_message(
                organization=self.organization,
                phone_input=request.data["phone"],
                **serializer.validated_data,
            )
        return send_response(result, chat=chat_data(result.chat), template=False)


class SendTemplateView(OrganizationScopedMixin, APIView):
    """`POST /api/send/template`: a template message."""

    @idempotent
    def post(self, request):
        serializer = SendTemplateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        with channel_errors():
            result = services.send_template(
                organization=self.organization,
                phone=data["phone"],
                phone_input=request.data["phone"],
                template=data["template"],
                new_contact=data["new_contact"],
                reply_to=data["reply_to"],
                sender=data["sender"],
            )
        return send_response(result, chat=chat_data(result.chat, with_contact=False), template=True)


class SendMediaView(OrganizationScopedMixin, APIView):
    """`POST /api/send/media`: an image, document, audio, video or sticker, by link."""

    @idempotent
    def post(self, request):
        serializer = SendMediaInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with channel_errors():
            result = services.send_media(
                organization=self.organization,
                phone_input=request.data["phone"],
                **serializer.validated_data,
            )
        return send_response(result, chat=chat_data(result.chat), template=False)


class SendContentView(OrganizationScopedMixin, APIView):
    """A message sent as WhatsApp's own object, `kind` taken from the body's field of that
    name (`interactive`, `location`, `contacts`): checked, sent, answered as /api/send."""

    kind: str
    input_serializer: type[serializers.Serializer]

    @idempotent
    def post(self, request):
        serializer = self.input_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        content = data.pop(self.kind)
        with channel_errors():
            result = services.send_content(
                organization=self.organization,
                phone_input=request.data["phone"],
                kind=self.kind,
                content=content,
                **data,
            )
        return send_response(result, chat=chat_data(result.chat), template=False)


class SendInteractiveView(SendContentView):
    """`POST /api/send/interactive`: reply buttons, a list, a call-to-action URL, a location
    request or a Flow, WhatsApp's limits checked first (docs/messages.md)."""

    kind = "interactive"
    input_serializer = SendInteractiveInputSerializer


class SendLocationView(SendContentView):
    """`POST /api/send/location`: a pin on the map."""

    kind = "location"
    input_serializer = SendLocationInputSerializer


class SendContactsView(SendContentView):
    """`POST /api/send/contacts`: contact cards."""

    kind = "contacts"
    input_serializer = SendContactsInputSerializer


class SendReactionView(OrganizationScopedMixin, APIView):
    """`POST /api/send/reaction`: an emoji on a message, or none to remove it."""

    @idempotent
    def post(self, request):
        serializer = SendReactionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with channel_errors():
            result = services.send_reaction(
                organization=self.organization,
                phone_input=request.data["phone"],
                **serializer.validated_data,
            )
        return send_response(result, chat=chat_data(result.chat), template=False)


class AnyMediaRenderer(BaseRenderer):
    """Lets a client that asks for the file's own type (`Accept: image/jpeg`) have it: the
    file is a FileResponse, never rendered; an error is still the JSON envelope."""

    media_type = "*/*"
    format = "file"
    charset = None
    render_json = JSONRenderer().render

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return self.render_json(data, "application/json", renderer_context)


class ChatViewSet(OrganizationViewSet):
    queryset = Chat.objects.live().select_related("contact", "media", "number")
    filterset_class = ChatFilter
    represent = staticmethod(chat_record)

    @action(detail=True, methods=["get"], renderer_classes=[JSONRenderer, AnyMediaRenderer])
    def media(self, request, uuid=None):
        """The file of an inbound image, voice note, video, document or sticker, once
        fetched from the channel (404 before, and for another organization's chat)."""
        chat = self.get_object()
        media = chat.media
        if media is None or media.state != MediaState.AVAILABLE:
            raise ApiError(404, "Not found.")
        try:
            stored = default_storage.open(media.file.name, "rb")
        except FileNotFoundError:
            raise ApiError(404, "Not found.") from None
        response = FileResponse(
            stored,
            as_attachment=True,
            filename=download_name(media, chat),
            content_type=media.mime_type or "application/octet-stream",
        )
        response["Cache-Control"] = "private, no-store"
        response["X-Content-Type-Options"] = "nosniff"
        return response

    def retrieve(self, request, *args, **kwargs):
        """One chat, with the history of its status updates from the webhook."""
        chat = self.get_object()
        return Response({"data": chat_detail(chat)})
