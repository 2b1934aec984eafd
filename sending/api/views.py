"""Sending, chats and templates over the API. Thin: validate, call the service, shape."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rest_framework.response import Response
from rest_framework.views import APIView

from messaging_project.api.exceptions import ApiError
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationScopedMixin, OrganizationViewSet
from sending import services
from sending.api.filters import ChatFilter, MessageTemplateFilter
from sending.api.serializers import (
    SendMessageInputSerializer,
    SendTemplateInputSerializer,
    chat_data,
    chat_record,
    status_history,
    template_data,
)
from sending.gateway import ChannelNotConfigured, FailureKind, GatewayError
from sending.gateway.base import NOT_CONFIGURED
from sending.models import Chat, MessageTemplate

# The contract's status for each way the channel can fail (contract.md, section 1).
CHANNEL_STATUS = {
    FailureKind.REFUSED: 422,
    FailureKind.CREDENTIALS: 502,
    FailureKind.UNAVAILABLE: 502,
    FailureKind.TIMEOUT: 504,
}
CREDENTIALS_MESSAGE = (
    "The WhatsApp channel rejected this organization's credentials; "
    "the channel credentials need attention."
)
NOT_RECORDED = (
    "The message may have been sent, but the service could not record the outcome because "
    "its database is unavailable. Do not resend it blindly: a resend may reach the "
    "recipient twice."
)


def channel_error(error: GatewayError) -> dict[str, Any]:
    """The contract's `channel_error` object: Graph's error, as the gateway kept it."""
    return {
        "code": error.code,
        "type": error.type,
        "message": error.message,
        "details": error.details,
        "fbtrace_id": error.fbtrace_id,
    }


def channel_message(error: GatewayError) -> str:
    """The sentence the API answers with: Graph's own text, unless it rejected our credentials
    (then the organization must act, whatever Graph's wording)."""
    if error.kind == FailureKind.CREDENTIALS:
        return CREDENTIALS_MESSAGE
    return error.message


@contextmanager
def channel_errors() -> Iterator[None]:
    """The contract's answers for a channel that cannot send or did not accept, and for a
    send whose outcome could not be recorded (a 503 without Retry-After, with what the
    channel said: its message id, or its error)."""
    try:
        yield
    except ChannelNotConfigured:
        raise ApiError(403, NOT_CONFIGURED) from None
    except services.SendFailed as failed:
        error = failed.error
        raise ApiError(
            CHANNEL_STATUS[error.kind], channel_message(error), channel_error=channel_error(error)
        ) from None
    except services.SendNotRecorded as unknown:
        known = {"wam_id": unknown.wam_id} if unknown.wam_id else {}
        if unknown.error is not None:
            known["channel_error"] = channel_error(unknown.error)
        raise ApiError(503, NOT_RECORDED, **known) from None


def send_response(result: services.SendResult, *, chat: dict[str, Any], template: bool) -> Response:
    message: dict[str, Any] = {"id": result.chat.wam_id}
    if template:
        message["message_status"] = result.chat.status
    return Response(
        {
            "statusCode": 200,
            "data": {
                "success": True,
                "data": {
                    "messaging_product": result.answer.get("messaging_product", "whatsapp"),
                    "contacts": [{"input": result.phone_input, "wa_id": result.wa_id}],
                    "messages": [message],
                    "chat": chat,
                },
            },
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
            )
        return send_response(result, chat=chat_data(result.chat, with_contact=False), template=True)


class ChatViewSet(OrganizationViewSet):
    queryset = Chat.objects.live().select_related("contact")
    filterset_class = ChatFilter
    represent = staticmethod(chat_record)

    def retrieve(self, request, *args, **kwargs):
        """One chat, with the history of its status updates from the webhook."""
        chat = self.get_object()
        return Response({"data": {**chat_record(chat), "statuses": status_history(chat)}})


class MessageTemplateViewSet(OrganizationViewSet):
    queryset = MessageTemplate.objects.live()
    filterset_class = MessageTemplateFilter
    represent = staticmethod(template_data)
