"""Contacts and groups on the wire: input validation (the output shapes are in
contacts/representations.py)."""

from typing import Any

from rest_framework import serializers

from contacts.models import ContactGroup
from contacts.services import INVALID_GROUP
from messaging_project.api.fields import PhoneNumberField, StrictBooleanField, StrictCharField


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
