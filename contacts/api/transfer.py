"""Contacts in bulk over the API: the import (a CSV file or a JSON list, run by a task)
with its progress, and the export, streamed as CSV (docs/contacts.md)."""

import csv
import uuid

from django.http import StreamingHttpResponse
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.response import Response
from rest_framework.viewsets import GenericViewSet

from contacts import imports, selectors, tasks
from contacts.api.serializers import ContactImportOptionsSerializer
from contacts.models import ContactImport
from contacts.representations import (
    BYTE_ORDER_MARK,
    EXPORT_COLUMNS,
    contact_import_data,
    export_row,
)
from messaging_project.api.parsers import LaravelMultiPartParser, LargeJSONObjectParser
from messaging_project.api.viewsets import OrganizationScopedMixin

# Rows written to the response at a time: one chunk of the stream.
EXPORT_ROWS_PER_CHUNK = 500


class Echo:
    """What csv.writer writes to: the line itself, handed back."""

    def write(self, value: str) -> str:
        return value


def export_lines(organization_id: int):
    writer = csv.writer(Echo())
    yield BYTE_ORDER_MARK + writer.writerow(EXPORT_COLUMNS)
    lines = []
    for values in selectors.export_rows(organization_id=organization_id):
        lines.append(writer.writerow(export_row(*values)))
        if len(lines) == EXPORT_ROWS_PER_CHUNK:
            yield "".join(lines)
            lines = []
    if lines:
        yield "".join(lines)


def export_response(organization_id: int, file_name: str = "contacts.csv"):
    response = StreamingHttpResponse(
        export_lines(organization_id), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{file_name}"'
    return response


def import_source(options: dict) -> dict:
    """What start_contact_import takes of the file (checked as Django's upload handlers
    spooled it: a CSV file a line at a time, a workbook's zip directory) or the JSON list
    (its rows) sent; a 400 on `file` or `contacts` when the whole of it is unusable."""
    try:
        if "file" in options:
            upload = options["file"]
            return {"file": imports.checked_file(upload), "file_name": upload.name or ""}
        return {"rows": imports.json_rows(options["contacts"])}
    except imports.ImportRefused as refused:
        raise ApiValidationError(refused.message_dict) from None


class ContactTransferViewSet(OrganizationScopedMixin, GenericViewSet):
    queryset = ContactImport.objects.live().defer("rows", "source")
    # A file comes as multipart/form-data, a list of contacts as JSON: the API's body
    # limit for this path (settings.LARGE_BODY_MAX_SIZE) holds for both.
    parser_classes = [LargeJSONObjectParser, LaravelMultiPartParser]

    # Routed in contacts/api/urls.py; @action marks them for the OpenAPI description.
    @action(detail=False, methods=["post"])
    def start_import(self, request):
        data = request.data
        if request.FILES:  # the file itself, not DRF's merge of it as a list of files
            data = {**data, **request.FILES.dict()}
        serializer = ContactImportOptionsSerializer(
            data=data, context={"request": request, "organization": self.organization}
        )
        serializer.is_valid(raise_exception=True)
        options = serializer.validated_data
        contact_import = tasks.start_contact_import(
            organization=self.organization,
            on_duplicate=options["on_duplicate"],
            contact_group=options.get("contact_group"),
            **import_source(options),
        )
        data = {"uuid": str(contact_import.uuid), "status": contact_import.status}
        return Response({"data": data}, status=202)

    @action(detail=False, methods=["get"])
    def show_import(self, request, import_uuid=None):
        try:
            value = uuid.UUID(str(import_uuid))
        except ValueError:
            raise NotFound() from None
        contact_import = self.get_queryset().filter(uuid=value).first()
        if contact_import is None:
            raise NotFound()
        return Response({"data": contact_import_data(contact_import)})

    @action(detail=False, methods=["get"])
    def export(self, request):
        return export_response(self.organization.pk)
