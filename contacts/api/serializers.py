"""Contacts and groups on the wire: input validation (the output shapes are in
contacts/representations.py)."""

import json
from typing import Any

from rest_framework import serializers

from contacts.models import ContactGroup, OnDuplicate
from contacts.representations import ADDRESS_KEYS
from contacts.services import INVALID_GROUP
from messaging_project.api.fields import (
    PassThroughJSONField,
    PhoneNumberField,
    StrictBooleanField,
    StrictCharField,
)

# How deep a contact's metadata may nest (as an import's may, contacts/importing.py).
METADATA_DEPTH = 8
TWO_GROUPS = "Give the group once: `group` and `contact_group` name different groups."
AVATAR_NOT_STORED = (
    "Contact avatars are not stored: send the contact without `file` (its avatar image)."
)


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


class ContactMetadataField(PassThroughJSONField):
    """A contact's own fields (the original product's custom fields): an object, or its
    JSON text as a form sends it; null (or empty text) clears them."""

    max_depth = METADATA_DEPTH
    default_error_messages = {"invalid": "Must be an object, or the JSON text of one."}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str):
            if not data.strip():
                return None
            try:
                data = json.loads(data)
            except ValueError:
                self.fail("invalid")
        if not isinstance(data, dict):
            self.fail("invalid")
        return super().to_internal_value(data) or None


class RefusedField(serializers.Field):
    """A field the original product takes and this service does not keep: given, it is a
    400 naming it rather than dropped (docs/migrating.md). Null or empty (a form's file
    input left blank, which the original ignores too) is nothing given."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(required=False, allow_null=True, write_only=True, **kwargs)
        self.message = message

    def to_internal_value(self, data: Any) -> None:
        if data == "":
            return None
        raise serializers.ValidationError(self.message)

    def to_representation(self, value: Any) -> None:
        return None


class ContactInputSerializer(serializers.Serializer):
    first_name = optional_text()
    last_name = optional_text()
    phone = PhoneNumberField()
    email = serializers.EmailField(
        required=False, allow_null=True, allow_blank=True, max_length=255
    )
    contact_group = serializers.UUIDField(required=False, allow_null=True)
    # The original product's name for it (docs/contacts.md): a group's uuid.
    group = serializers.UUIDField(
        required=False, allow_null=True, help_text="The same as `contact_group`."
    )
    address = AddressSerializer(required=False, allow_null=True)
    # The address as the original product takes it, one field each; over `address`.
    street = optional_text()
    city = optional_text()
    state = optional_text()
    zip = optional_text()
    country = optional_text()
    metadata = ContactMetadataField(
        required=False,
        allow_null=True,
        help_text="Custom fields: an object (or its JSON text); null clears them.",
    )
    is_favorite = StrictBooleanField(required=False)
    # The original's avatar upload (ContactService::store); no avatar is stored here.
    file = RefusedField(AVATAR_NOT_STORED)

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

    def validate_group(self, value):
        return self.validate_contact_group(value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs.pop("file", None)  # given empty: nothing to keep
        # Blank optional text means "no value".
        for field in ("first_name", "last_name", "email"):
            if attrs.get(field) == "":
                attrs[field] = None
        if "group" in attrs:
            group = attrs.pop("group")
            if "contact_group" in attrs and attrs["contact_group"] != group:
                raise serializers.ValidationError({"group": [TWO_GROUPS]})
            attrs["contact_group"] = group
        parts = {key: attrs.pop(key) or None for key in ADDRESS_KEYS if key in attrs}
        if parts:
            # A new contact's address is whole; an edit's parts change only themselves
            # (contacts.services.update_contact).
            if self.partial:
                attrs["address_parts"] = parts
            else:
                attrs["address"] = {**(attrs.get("address") or {}), **parts}
        return attrs


class ContactGroupInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=255)


class ContactImportOptionsSerializer(serializers.Serializer):
    """An import's options, beside its `file` (multipart) or its `contacts` (JSON)."""

    file = serializers.FileField(
        required=False,
        help_text="A CSV file, or an Excel workbook (.xlsx, its first sheet), as "
        "multipart/form-data, at most 20 MB.",
    )
    contacts = serializers.JSONField(
        required=False,
        help_text="Instead of a file, in a JSON body: a list of contact objects "
        "(first_name, last_name, phone, email, group, street, city, state, zip, country "
        "or an address object, is_favorite, opted_out; other keys kept in metadata).",
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
