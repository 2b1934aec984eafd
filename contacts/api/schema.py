"""The OpenAPI description of contacts and contact groups: the records that
`contact_data` and `contact_group_data` return, the edit bodies, and the two viewsets.

drf-spectacular finds the view extensions below only once this module is imported:
ContactsConfig.ready() imports it, so it is loaded wherever Django is set up. The shared
pieces (page and detail wrappers, errors, headers) are in messaging_project/api/schema.py;
tests/contacts/test_documented_shapes.py checks that the data functions return exactly
the fields documented here.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension, OpenApiViewExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers

from contacts.api.serializers import (
    METADATA_DEPTH,
    ContactGroupInputSerializer,
    ContactImportOptionsSerializer,
    ContactInputSerializer,
)
from contacts.models import ImportStatus, OnDuplicate
from messaging_project.api.schema import (
    ERRORS,
    HEADERS,
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
    metadata = text(
        "A JSON-encoded object: what an import's extra columns held, by column; or null.",
        null=True,
    )
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


class RefusedFieldSchema(OpenApiSerializerFieldExtension):
    """A field the original product takes and this service refuses (a 400 naming it)."""

    target_class = "contacts.api.serializers.RefusedField"

    def map_serializer_field(self, auto_schema, direction):
        return {
            "type": "string",
            "format": "binary",
            "nullable": True,
            "description": "Refused when given (400): contact avatars are not stored. "
            "Null or empty is ignored.",
        }


class ContactMetadataSchema(OpenApiSerializerFieldExtension):
    """A contact's custom fields: an object, or the JSON text of one (a form's)."""

    target_class = "contacts.api.serializers.ContactMetadataField"

    def map_serializer_field(self, auto_schema, direction):
        return {
            "oneOf": [
                {"type": "object", "additionalProperties": True},
                {"type": "string", "description": "The JSON text of an object."},
            ],
            "nullable": True,
            "description": "The contact's custom fields (the original product's metadata): "
            "an object, or its JSON text; null or empty text clears them. At most "
            f"{METADATA_DEPTH} levels of objects and lists.",
        }


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


# Bulk contacts: the import, its progress and the export (docs/contacts.md).


class ContactImportErrorSerializer(serializers.Serializer):
    row = integer(
        "The row's number: in a CSV file, its row as a spreadsheet shows it (the header "
        "is row 1); in a JSON list, its position from 1; 0 for the file as a whole (a "
        "workbook whose sheet cannot be imported, the import `failed`)."
    )
    phone = text("The phone as the row gave it.")
    message = text("Why the row was not imported.")


class ContactImportRecordSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    status = text("One of: " + ", ".join(ImportStatus.values) + ".")
    on_duplicate = serializers.ChoiceField(choices=OnDuplicate.values)
    total = integer("Rows in the file (blank lines left out).")
    processed = integer("Rows done so far.")
    created = integer("New contacts.")
    updated = integer("Rows that updated a contact (on_duplicate `update`).")
    skipped = integer("Rows of numbers the organization had, or the file repeated.")
    failed = integer("Rows not imported (see errors).")
    created_at = text(ISO_DATETIME)
    started_at = text(ISO_DATETIME, null=True)
    finished_at = text(ISO_DATETIME, null=True)
    # A declared field (DRF's metaclass takes it off the class): no clash with `errors`.
    errors = ContactImportErrorSerializer(many=True, help_text="The first 1,000 failed rows.")  # type: ignore[assignment]


class ContactImportStartedSerializer(serializers.Serializer):
    class Started(serializers.Serializer):
        uuid = serializers.UUIDField()
        status = text("`pending`: the import waits for a worker.")

    # A declared field (DRF's metaclass takes it off the class): no clash with `data`.
    data = Started()  # type: ignore[assignment]


class ContactImportJsonSerializer(serializers.Serializer):
    contacts = serializers.ListField(
        child=serializers.DictField(),
        help_text="The contacts: first_name, last_name, phone, email, group (a group's "
        "name, created when missing); other keys, and `metadata` (an object), are kept in "
        "the contact's metadata. At most 200,000.",
    )
    on_duplicate = serializers.ChoiceField(choices=OnDuplicate.values, default=OnDuplicate.SKIP)
    contact_group = serializers.UUIDField(required=False, allow_null=True)


class ContactImportFileSerializer(ContactImportOptionsSerializer):
    # None takes the inherited field away (DRF's way).
    contacts = None  # type: ignore[assignment]


ContactImportDetail = detail_of(ContactImportRecordSerializer, "ContactImportDetail")
BODY_ERRORS = (400, 401, 413, 415, 429, 503)


class ContactTransferViewSchema(OpenApiViewExtension):
    target_class = "contacts.api.transfer.ContactTransferViewSet"
    view_replacement = documented(
        extend_schema_view(
            start_import=extend_schema(
                summary="Import contacts (a CSV file or a JSON list), in the background",
                request={
                    "multipart/form-data": ContactImportFileSerializer,
                    "application/json": ContactImportJsonSerializer,
                },
                responses={
                    202: ContactImportStartedSerializer,
                    **{code: ERRORS[code] for code in BODY_ERRORS},
                },
                parameters=list(HEADERS),
            ),
            show_import=extend_schema(
                summary="Show an import's progress and failed rows",
                responses={
                    200: ContactImportDetail,
                    **{c: ERRORS[c] for c in (401, 404, 429, 503)},
                },
                parameters=list(HEADERS),
            ),
            export=extend_schema(
                summary="Export every live contact as CSV (streamed)",
                responses={
                    (200, "text/csv"): OpenApiResponse(
                        OpenApiTypes.STR,
                        "A header row `first_name,last_name,phone,email,group,metadata`, "
                        "then one row per live contact by id: the phone with its plus, the "
                        "group by name, the metadata as a JSON object.",
                    ),
                    **{c: ERRORS[c] for c in (401, 429, 503)},
                },
                parameters=list(HEADERS),
            ),
        ),
        "Contacts in bulk (docs/contacts.md). An import is checked whole when it comes (a "
        "file that cannot be read is a 400 and changes nothing), then run by a task; each "
        "row that cannot be imported is reported, the others are. A CSV file's header "
        "names its columns (first_name, last_name, phone, email, group, in any order and "
        "case, with or without spaces or underscores); other columns are kept in the "
        "contact's metadata. UTF-8 (with or without BOM) or Latin-1; comma, semicolon or "
        "tab. At most 20 MB and 200,000 rows.",
    )
