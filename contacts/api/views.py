from contacts import services
from contacts.api.filters import ContactFilter, ContactGroupFilter
from contacts.api.pagination import ContactPagination
from contacts.api.serializers import ContactGroupInputSerializer, ContactInputSerializer
from contacts.models import Contact, ContactGroup
from contacts.representations import contact_data, contact_group_data
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationViewSet, write_result


class ContactViewSet(OrganizationViewSet):
    queryset = Contact.objects.live()
    filterset_class = ContactFilter
    pagination_class = ContactPagination
    input_serializer_class = ContactInputSerializer
    represent = staticmethod(contact_data)

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
