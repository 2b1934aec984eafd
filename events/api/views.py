"""Event webhook endpoints over the API. Thin: validate, call the service, shape."""

from rest_framework.decorators import action

from events import selectors, services
from events.api.serializers import EndpointEditSerializer, EndpointInputSerializer
from events.models import Endpoint
from events.representations import delivery_data, endpoint_data, endpoint_listed
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationViewSet, write_result


class EndpointViewSet(OrganizationViewSet):
    queryset = Endpoint.objects.live()
    input_serializer_class = EndpointInputSerializer
    represent = staticmethod(endpoint_data)

    def list(self, request, *args, **kwargs):
        """The page shows no secret: only the detail does (read it after a create or a
        rotation), so that a page of endpoints never hands over every key at once."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([endpoint_listed(endpoint) for endpoint in page])

    @idempotent
    def create(self, request):
        endpoint = services.create_endpoint(
            organization=self.organization, **self.validated_input()
        )
        return write_result(endpoint)

    def update(self, request, uuid=None):
        endpoint = self.get_object()
        self.input_serializer_class = EndpointEditSerializer
        services.update_endpoint(endpoint=endpoint, changes=self.validated_input(partial=True))
        return write_result(endpoint)

    partial_update = update

    def destroy(self, request, uuid=None):
        endpoint = self.get_object()
        services.delete_endpoint(endpoint=endpoint)
        return write_result(endpoint)

    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, uuid=None):
        endpoint = services.rotate_secret(endpoint=self.get_object())
        return write_result(endpoint)

    @action(detail=True, methods=["get"])
    def deliveries(self, request, uuid=None):
        page = self.paginate_queryset(selectors.endpoint_deliveries(self.get_object()))
        return self.get_paginated_response([delivery_data(delivery) for delivery in page])
