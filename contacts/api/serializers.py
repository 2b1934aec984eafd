"""Contacts and groups on the wire: input validation (the output shapes are in
contacts/representations.py)."""

from typing import Any

from rest_framework import serializers

from contacts.models import ContactGroup, OnDuplicate
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


class ContactImportOptionsSerializer(serializers.Serializer):
    """An import's options, beside its `file` (multipart) or its `contacts` (JSON)."""

    file = serializers.FileField(
        required=False, help_text="The CSV file (multipart/form-data), at most 20 MB."
    )
    contacts = serializers.JSONField(
        required=False,
        help_text="Instead of a file, in a JSON body: a list of contact objects "
        "(first_name, last_name, phone, email, group; other keys kept in metadata).",
    )
    on_duplicate = serializers.ChoiceField(
        choices=OnDuplicate.values,
        default=OnDuplicate.SKIP,
        # Not the value echoed back: it may hold text no JSON answer can carry.
        error_messages={"invalid_choice": "Choose skip or update."},
        help_text="What a number the organization already has (or the file repeats) "
        "does: `skip` leaves the contact as it is, `update` writes the row's values.",
    )
    contact_group = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="A contact group every imported contact joins (a row's own `group` "
        "column, when filled, wins).",
    )

    def validate_contact_group(self, value):
        return ContactInputSerializer.validate_contact_group(self, value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("file" in attrs) == ("contacts" in attrs):
            raise serializers.ValidationError(
                {"file": ["Send a CSV file, or the contacts as a JSON list, not both."]}
                if "file" in attrs
                else {"file": ["Send a CSV file (or, in a JSON body, a list of contacts)."]}
            )
        return attrs
