"""Contacts' background work: bulk imports (contacts/importing.py)."""

import uuid

from django.db import transaction
from django_tasks import task

from accounts.models import Organization
from contacts import importing
from contacts.imports import CheckedFile
from contacts.models import ContactGroup, ContactImport, OnDuplicate
from messaging_project.core.storable import without_unstorable
from messaging_project.worker.priorities import BULK
from messaging_project.worker.turns import enqueue_in_turn


# Bulk work, in its organization's turn: an import of 100,000 rows holds its thread for
# seconds, and never delays anyone's auto-replies.
@task(priority=BULK)
def run_contact_import(import_id: int) -> str:
    """Import a stored import's rows, carrying on from its last batch; its status."""
    return importing.run_contact_import(import_id=import_id)


def start_contact_import(
    *,
    organization: Organization,
    rows: list[list] | None = None,
    file: CheckedFile | None = None,
    on_duplicate: str = OnDuplicate.SKIP,
    contact_group: ContactGroup | None = None,
    file_name: str = "",
    created_by: int = 0,
) -> ContactImport:
    """Stream a checked file (a CSV file or a workbook, contacts.imports), or the rows of
    a JSON list, to storage, then record the import and enqueue it in one transaction.
    The API and the admin both start imports here."""
    import_uuid = uuid.uuid4()
    if file is not None:
        stored = importing.store_file(import_uuid, file.file, workbook=file.workbook)
        encoding, total = file.encoding, file.rows
    else:
        stored = importing.store_rows(import_uuid, rows or [])
        encoding, total = "", len(rows or [])
    try:
        with transaction.atomic():
            contact_import = ContactImport.objects.create(
                uuid=import_uuid,
                organization=organization,
                stored_file=stored,
                encoding=encoding,
                total=total,
                on_duplicate=on_duplicate,
                contact_group=contact_group,
                file_name=without_unstorable(file_name)[:255],
                created_by=created_by,
            )
            enqueue_in_turn(run_contact_import, organization.pk, contact_import.pk)
    except BaseException:
        importing.delete_stored(stored)
        raise
    return contact_import
