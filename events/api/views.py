"""Event webhook endpoints over the API. Thin: validate, call the service, shape."""

from rest_framework.decorators import action
from rest_framework.response import Response

from events import selectors, services
from events.api.serializers import EndpointEditSerializer, EndpointInputSerializer
from events.models import Endpoint
from events.representations import delivery_data, endpoint_data, endpoint_listed
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationViewSet, write_result


def with_secret(response: Response, endpoint: Endpoint | None) -> Response:
    """A write result that also shows the endpoint's secret (docs/events.md: creation
    and rotation show it), so the receiver can be set up without reading the detail."""
    if endpoint is not None and response.status_code == 200:
        response.data = {**response.data, "secret": endpoint.secret}
    return response


class EndpointViewSet(OrganizationViewSet):
    queryset = Endpoint.objects.live()
    input_serializer_class = EndpointInputSerializer
    represent = staticmethod(endpoint_data)

    def list(self, request, *args, **kwargs):
        """The page shows no secret (the detail, the creation and the rotation do), so
        that a page of endpoints never hands over every key at once."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([endpoint_listed(endpoint) for endpoint in page])

    def create(self, request):
        # The secret is added after the idempotent part, so that the replayed answers kept
        # for Idempotency-Key never store it in the clear.
        response = self.create_once(request)
        if response.status_code != 200:
            return response
        return with_secret(
            response, selectors.live_endpoint(self.organization, response.data["id"])
        )

    @idempotent
    def create_once(self, request):
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
        return with_secret(write_result(endpoint), endpoint)

    @action(detail=True, methods=["get"])
    def deliveries(self, request, uuid=None):
        page = self.paginate_queryset(selectors.endpoint_deliveries(self.get_object()))
        return self.get_paginated_response([delivery_data(delivery) for delivery in page])
