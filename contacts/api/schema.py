"""The OpenAPI description of contacts and contact groups: the records that
`contact_data` and `contact_group_data` return, the edit bodies, and the two viewsets.

drf-spectacular finds the view extensions below only once this module is imported:
ContactsConfig.ready() imports it, so it is loaded wherever Django is set up. The shared
pieces (page and detail wrappers, errors, headers) are in messaging_project/api/schema.py;
tests/contacts/test_documented_shapes.py checks that the data functions return exactly
the fields documented here.
"""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from contacts.api.serializers import ContactGroupInputSerializer, ContactInputSerializer
from messaging_project.api.schema import (
    ISO_DATETIME,
    LARAVEL_DATETIME,
    RESOURCE_DOC,
    RecordSerializer,
    detail_of,
    documented,
    integer,
    page_of,
    resource_schema,
    text,
)


class ContactRecordSerializer(RecordSerializer):
    """A contact as `contacts.representations.contact_data` writes it."""

    first_name = text(null=True)
    last_name = text(null=True)
    phone = text("Digits only, country code first, no plus.")
    email = text(null=True)
    avatar = text(null=True)
    address = text(
        "A JSON-encoded object with street, city, state, zip and country (each a string "
        "or null), or null.",
        null=True,
    )
    contact_group_id = integer(null=True)
    is_favorite = serializers.ChoiceField(choices=[0, 1])
    opted_out = integer(
        "0 or 1: 1 when the contact opted out of campaigns (an inbound STOP, or the "
        "channel's error 131050); an inbound START sets it back to 0."
    )
    user_id = text(
        "The WhatsApp business-scoped user id, or empty: the only identity of a user "
        "whose number WhatsApp withholds (then `phone` is empty)."
    )
    created_by = integer("0 for records written through the API.")
    created_at = text(LARAVEL_DATETIME, null=True)
    updated_at = text(LARAVEL_DATETIME, null=True)
    deleted_at = text(LARAVEL_DATETIME, null=True)
    full_name = text("First and last name joined by one space.")
    formatted_phone_number = text(
        "The phone in international format (`+52 55 1234 5678`), as the original product "
        "appends it; empty for a contact known only by its WhatsApp user id."
    )


class ContactGroupRecordSerializer(RecordSerializer):
    name = text()
    created_by = integer()
    created_at = text(ISO_DATETIME)
    updated_at = text(ISO_DATETIME)
    deleted_at = text(ISO_DATETIME, null=True)


ContactPage = page_of(ContactRecordSerializer, "ContactPage")
ContactDetail = detail_of(ContactRecordSerializer, "ContactDetail")
ContactGroupPage = page_of(ContactGroupRecordSerializer, "ContactGroupPage")
ContactGroupDetail = detail_of(ContactGroupRecordSerializer, "ContactGroupDetail")


class ContactEditSerializer(ContactInputSerializer):
    """An edit changes only the fields sent, so none is required."""

    def __init__(self, *args, **kwargs):
        kwargs["partial"] = True
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class ContactGroupEditSerializer(ContactGroupInputSerializer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False


class ContactViewSchema(OpenApiViewExtension):
    target_class = "contacts.api.views.ContactViewSet"
    view_replacement = documented(
        resource_schema(
            noun="contact",
            page=ContactPage,
            detail=ContactDetail,
            input_serializer=ContactInputSerializer,
            edit_serializer=ContactEditSerializer,
            # django-filter's description would call this a boolean with string values.
            filters=[OpenApiParameter("is_favorite", OpenApiTypes.STR, enum=["0", "1"])],
        ),
        f"Contacts. The request sends `phone` with a leading plus; the record holds digits "
        f"only. {RESOURCE_DOC}",
    )


class ContactGroupViewSchema(OpenApiViewExtension):
    target_class = "contacts.api.views.ContactGroupViewSet"
    view_replacement = documented(
        resource_schema(
            noun="contact group",
            page=ContactGroupPage,
            detail=ContactGroupDetail,
            input_serializer=ContactGroupInputSerializer,
            edit_serializer=ContactGroupEditSerializer,
        ),
        f"Contact groups. Deleting a group detaches its contacts. {RESOURCE_DOC}",
    )
