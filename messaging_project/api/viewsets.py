"""The base of every API viewset: tenancy, uuid lookup, list and detail shapes."""

import uuid
from collections.abc import Callable
from typing import Any

from django.shortcuts import get_object_or_404
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.viewsets import GenericViewSet

WRITE_OK = "Request processed successfully"


class OrganizationScopedMixin:
    """Every queryset is narrowed to the token's organization.

    Another organization's record is therefore simply not found (404). A test walks
    the URLconf and fails if an API view does not use this mixin.
    """

    @property
    def organization(self):
        return self.request.auth.organization

    def get_queryset(self):
        return super().get_queryset().filter(organization=self.organization)


def write_result(record) -> Response:
    return Response({"statusCode": 200, "id": str(record.uuid), "message": WRITE_OK})


class OrganizationViewSet(OrganizationScopedMixin, GenericViewSet):
    """List and detail for a resource; subclasses add the writes through their services."""

    lookup_field = "uuid"
    # The writes' input, set by each subclass that writes.
    input_serializer_class: type[BaseSerializer]
    # Turns a record into its api.md dict; a plain function keeps lists fast.
    represent: Callable[[Any], dict[str, Any]]

    def get_object(self):
        try:
            value = uuid.UUID(str(self.kwargs[self.lookup_field]))
        except ValueError:
            raise NotFound() from None
        return get_object_or_404(self.get_queryset(), uuid=value)

    def list(self, request, *args, **kwargs):
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response([self.represent(record) for record in page])

    def retrieve(self, request, *args, **kwargs):
        return Response({"data": self.represent(self.get_object())})

    def validated_input(self, *, partial: bool = False, instance=None) -> dict[str, Any]:
        serializer = self.input_serializer_class(
            instance,
            data=self.request.data,
            partial=partial,
            context={"request": self.request, "organization": self.organization},
        )
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)
