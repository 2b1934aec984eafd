from contacts import services
from contacts.api.filters import ContactFilter, ContactGroupFilter
from contacts.api.serializers import (
    ContactGroupInputSerializer,
    ContactInputSerializer,
    contact_data,
    contact_group_data,
)
from contacts.models import Contact, ContactGroup
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationViewSet, write_result


class ContactViewSet(OrganizationViewSet):
    queryset = Contact.objects.live()
    filterset_class = ContactFilter
    input_serializer_class = ContactInputSerializer
    represent = staticmethod(contact_data)

    def unfiltered(self) -> bool:
        """No filter or ordering parameter: all live contacts, by id."""
        return not any(name in self.request.query_params for name in ContactFilter.base_filters)

    def list(self, request, *args, **kwargs):
        if not self.unfiltered():
            return super().list(request, *args, **kwargs)
        # The plain list, the one every client pages through: its page and exact total
        # in one statement (services.plain_page), with no queryset or filter set to build.
        organization_id = self.organization.pk
        page = self.paginator.paginate_plain(
            lambda offset, limit: services.plain_page(
                organization_id=organization_id, offset=offset, limit=limit
            ),
            request,
        )
        return self.paginator.get_paginated_response([contact_data(row) for row in page])

    def count_total(self, queryset) -> int:
        """The list's `meta.total`: the organization's live-contact counter unless a
        filter narrows the list, which is then counted as usual."""
        filtered = any(
            self.request.query_params.get(name, "").strip()
            for name in ContactFilter.base_filters
            if name != "ordering"
        )
        if filtered:
            return queryset.count()
        return services.live_contact_count(organization_id=self.organization.pk)

    @idempotent
    def create(self, request):
        contact = services.create_contact(organization=self.organization, **self.validated_input())
        return write_result(contact)

    def update(self, request, uuid=None):
        contact = self.get_object()
        services.update_contact(contact=contact, changes=self.validated_input(partial=True))
        return write_result(contact)

    partial_update = update

    def destroy(self, request, uuid=None):
        contact = self.get_object()
        services.delete_contact(contact=contact)
        return write_result(contact)


class ContactGroupViewSet(OrganizationViewSet):
    queryset = ContactGroup.objects.live()
    filterset_class = ContactGroupFilter
    input_serializer_class = ContactGroupInputSerializer
    represent = staticmethod(contact_group_data)

    @idempotent
    def create(self, request):
        group = services.create_contact_group(
            organization=self.organization, **self.validated_input()
        )
        return write_result(group)

    def update(self, request, uuid=None):
        group = self.get_object()
        services.update_contact_group(group=group, changes=self.validated_input(partial=True))
        return write_result(group)

    partial_update = update

    def destroy(self, request, uuid=None):
        group = self.get_object()
        services.delete_contact_group(group=group)
        return write_result(group)
