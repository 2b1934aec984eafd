"""Numbers, templates and the channel over the API. Thin: validate, call the service,
shape."""

from contextlib import contextmanager

from rest_framework.response import Response
from rest_framework.views import APIView

from business_numbers import services
from business_numbers.api.errors import gateway_errors
from business_numbers.api.filters import MessageTemplateFilter
from business_numbers.api.serializers import (
    ChannelSettingsInputSerializer,
    NumberInputSerializer,
    NumberUpdateSerializer,
    TemplateInputSerializer,
    TemplateUpdateSerializer,
)
from business_numbers.models import MessageTemplate, Number
from business_numbers.representations import channel_data, number_data, template_data
from business_numbers.selectors import find_number
from messaging_project.api.exceptions import INVALID_DATA, ApiError
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import (
    WRITE_OK,
    OrganizationScopedMixin,
    OrganizationViewSet,
    write_result,
)

NUMBER_UNKNOWN = "No number of this organization has that uuid, phone number id or display number."


@contextmanager
def conflicts():
    """A write the numbers refuse as they stand: 409, with the field named."""
    try:
        yield
    except services.NumberConflict as conflict:
        raise ApiError(
            409, INVALID_DATA, errors={conflict.field: [conflict.message_text]}
        ) from None


class NumberViewSet(OrganizationViewSet):
    queryset = Number.objects.live()
    input_serializer_class = NumberInputSerializer
    represent = staticmethod(number_data)

    @idempotent
    def create(self, request):
        with conflicts():
            number = services.create_number(
                organization=self.organization, **self.validated_input()
            )
        return write_result(number)

    def partial_update(self, request, uuid=None):
        number = self.get_object()
        serializer = NumberUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with conflicts():
            services.update_number(number=number, **serializer.validated_data)
        return write_result(number)

    update = partial_update

    def destroy(self, request, uuid=None):
        number = self.get_object()
        with conflicts():
            services.delete_number(number=number)
        return write_result(number)


class MessageTemplateViewSet(OrganizationViewSet):
    """Templates: those synced from WhatsApp, and those written here (docs/templates.md):
    WhatsApp's rules checked first (400), then the write made at WhatsApp (its refusal a
    422 with its message), then here."""

    queryset = MessageTemplate.objects.live().select_related("number")
    filterset_class = MessageTemplateFilter
    represent = staticmethod(template_data)
    input_serializer_class = TemplateInputSerializer

    @idempotent
    def create(self, request):
        data = self.validated_input()
        number = self.template_number(data.pop("number"))
        with gateway_errors():
            template = services.create_template(number=number, **data)
        return write_result(template)

    def template_number(self, name: str) -> Number:
        if not name:
            return Number.objects.default_for(self.organization)
        number = find_number(self.organization, name)
        if number is None:
            raise ApiError(400, INVALID_DATA, errors={"number": [NUMBER_UNKNOWN]})
        return number

    def update(self, request, uuid=None):
        template = self.get_object()
        serializer = TemplateUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with gateway_errors():
            try:
                services.update_template(template=template, **serializer.validated_data)
            except MessageTemplate.DoesNotExist:
                raise ApiError(404, "Not found.") from None
        return write_result(template)

    partial_update = update

    def destroy(self, request, uuid=None):
        template = self.get_object()
        with gateway_errors():
            services.delete_template(template=template)
        return write_result(template)


class ChannelView(OrganizationScopedMixin, APIView):
    """`GET /api/channel`: the default number and its health as WhatsApp last reported
    them; `PATCH /api/channel`: the organization's own settings (`enforce_service_window`)."""

    def get(self, request):
        return Response({"data": channel_data(Number.objects.default_for(self.organization))})

    def patch(self, request):
        serializer = ChannelSettingsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        channel = services.set_service_window(
            organization=self.organization,
            enforce=serializer.validated_data["enforce_service_window"],
        )
        return Response({"statusCode": 200, "message": WRITE_OK, "data": channel_data(channel)})
