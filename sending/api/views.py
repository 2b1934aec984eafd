"""Sending, chats and templates over the API. Thin: validate, call the service, shape."""

from collections.abc import Callable, Iterator
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
from sending.media_names import download_name
from sending.models import Chat, MediaState
from sending.representations import (
    chat_data,
    chat_detail,
    chat_record,
    send_response_data,
)

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


class SendView(OrganizationScopedMixin, APIView):
    """A send: the body checked by `input_serializer`, the message sent by the sending
    service `send` from what it gives, and answered as /api/send answers."""

    input_serializer: type[serializers.Serializer]
    send: Callable[..., services.SendResult]
    # The template send answers with its chat without the contact, and its message status.
    template_answer = False

    @idempotent
    def post(self, request):
        serializer = self.input_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with channel_errors():
            result = self.send(
                organization=self.organization,
                phone_input=request.data["phone"],
                **self.arguments(dict(serializer.validated_data)),
            )
        chat = chat_data(result.chat, with_contact=not self.template_answer)
        return send_response(result, chat=chat, template=self.template_answer)

    def arguments(self, given: dict[str, Any]) -> dict[str, Any]:
        """The service's arguments from the validated body."""
        return given


class SendMessageView(SendView):
    """`POST /api/send`: a text, or an interactive message with reply buttons."""

    input_serializer = SendMessageInputSerializer
    send = staticmethod(services.send_message)


class SendTemplateView(SendView):
    """`POST /api/send/template`: a template message."""

    input_serializer = SendTemplateInputSerializer
    send = staticmethod(services.send_template)
    template_answer = True


class SendMediaView(SendView):
    """`POST /api/send/media`: an image, document, audio, video or sticker, by link."""

    input_serializer = SendMediaInputSerializer
    send = staticmethod(services.send_media)


class SendContentView(SendView):
    """A message sent as WhatsApp's own object, `kind` taken from the body's field of that
    name (`interactive`, `location`, `contacts`): checked, sent, answered as /api/send."""

    kind: str
    send = staticmethod(services.send_content)

    def arguments(self, given: dict[str, Any]) -> dict[str, Any]:
        content = given.pop(self.kind)
        return {**given, "kind": self.kind, "content": content}


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


class SendReactionView(SendView):
    """`POST /api/send/reaction`: an emoji on a message, or none to remove it."""

    input_serializer = SendReactionInputSerializer
    send = staticmethod(services.send_reaction)


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
