from contacts import services
from contacts.api.filters import ContactFilter, ContactGroupFilter
from contacts.api.serializers import (
    ContactGroupInputSerializer,
    ContactInputSerializer,
    contact_data,
    contact_group_data,
)
from contacts.models import Contact, ContactBlock, ContactGroup
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

    def filter_queryset(self, queryset):
        # Building the filter set and its form costs about a millisecond, a quarter of a
        # plain list request; with no filter or ordering parameter it would change nothing.
        if self.unfiltered():
            return queryset
        return super().filter_queryset(queryset)

    def page_start(self, queryset, offset: int):
        """For a deep page of the plain list, its first id found from the organization's
        block counts instead of by skipping `offset` index entries. A shallower page
        skips fewer entries than a block holds, so it goes the usual way."""
        if offset < ContactBlock.SIZE or not self.unfiltered():
            return None
        return services.page_start(organization_id=self.organization.pk, offset=offset)

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
