"""Contacts and groups on the wire: input validation and the api.md output shapes."""

from typing import Any

from rest_framework import serializers

from contacts.models import Contact, ContactGroup
from contacts.services import INVALID_GROUP, full_address
from messaging_project.api.fields import PhoneNumberField, StrictBooleanField, StrictCharField
from messaging_project.core.formats import iso_datetime, json_text, laravel_datetime
from messaging_project.core.phones import formatted_phone


def optional_text(**kwargs) -> StrictCharField:
    return StrictCharField(
        required=False, allow_null=True, allow_blank=True, max_length=255, **kwargs
    )


class AddressSerializer(serializers.Serializer):
    street = optional_text()
    city = optional_text()
    state = optional_text()
    zip = optional_text()
    country = optional_text()


class ContactInputSerializer(serializers.Serializer):
    first_name = optional_text()
    last_name = optional_text()
    phone = PhoneNumberField()
    email = serializers.EmailField(
        required=False, allow_null=True, allow_blank=True, max_length=255
    )
    contact_group = serializers.UUIDField(required=False, allow_null=True)
    address = AddressSerializer(required=False, allow_null=True)
    is_favorite = StrictBooleanField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.partial:  # a new contact needs a first name; an edit may clear it
            first_name = self.fields["first_name"]
            first_name.required, first_name.allow_null, first_name.allow_blank = True, False, False

    def validate_contact_group(self, value):
        if value is None:
            return None
        group = (
            ContactGroup.objects.live()
            .filter(organization=self.context["organization"], uuid=value)
            .first()
        )
        if group is None:  # another organization's group is treated as unknown
            raise serializers.ValidationError(INVALID_GROUP)
        return group

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Blank optional text means "no value".
        for field in ("first_name", "last_name", "email"):
            if attrs.get(field) == "":
                attrs[field] = None
        return attrs


class ContactGroupInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=255)


def contact_data(contact: Contact) -> dict[str, Any]:
    return {
        "id": contact.id,
        "uuid": str(contact.uuid),
        "organization_id": contact.organization_id,
        "first_name": contact.first_name,
        "last_name": contact.last_name,
        "phone": contact.phone,
        "email": contact.email,
        "avatar": contact.avatar,
        "address": json_text(full_address(contact.address)),  # jsonb does not keep key order
        "contact_group_id": contact.contact_group_id,
        "is_favorite": int(contact.is_favorite),
        "opted_out": int(contact.opted_out),
        # The business-scoped user id WhatsApp gave (docs/webhooks.md); for a user whose
        # number WhatsApp withholds, the one thing that tells the contact apart.
        "user_id": contact.user_id,
        "created_by": contact.created_by,
        "created_at": laravel_datetime(contact.created_at),
        "updated_at": laravel_datetime(contact.updated_at),
        "deleted_at": laravel_datetime(contact.deleted_at),
        "full_name": contact.full_name,
        # Appended by the original product to every contact: the number for people.
        "formatted_phone_number": formatted_phone(contact.phone),
    }


def contact_group_data(group: ContactGroup) -> dict[str, Any]:
    return {
        "id": group.id,
        "uuid": str(group.uuid),
        "organization_id": group.organization_id,
        "name": group.name,
        "created_by": group.created_by,
        "created_at": iso_datetime(group.created_at),
        "updated_at": iso_datetime(group.updated_at),
        "deleted_at": iso_datetime(group.deleted_at),
    }
