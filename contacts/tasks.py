"""Contacts' background work: bulk imports (contacts/importing.py)."""

from django.db import transaction
from django_tasks import task

from accounts.models import Organization
from contacts import importing
from contacts.imports import CheckedCsv
from contacts.models import ContactGroup, ContactImport, OnDuplicate
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
    csv_file: CheckedCsv | None = None,
    on_duplicate: str = OnDuplicate.SKIP,
    contact_group: ContactGroup | None = None,
    file_name: str = "",
    created_by: int = 0,
) -> ContactImport:
    """Store the rows of a JSON list, or a checked CSV file's text (contacts.imports), and
    enqueue their import, in one transaction. The API and the admin both start imports
    here."""
    with transaction.atomic():
        contact_import = ContactImport.objects.create(
            organization=organization,
            rows=rows or [],
            source=csv_file.text if csv_file else "",
            total=csv_file.rows if csv_file else len(rows or []),
            on_duplicate=on_duplicate,
            contact_group=contact_group,
            file_name=file_name[:255],
            created_by=created_by,
        )
        enqueue_in_turn(run_contact_import, organization.pk, contact_import.pk)
    return contact_import
