"""Running a contacts import (docs/contacts.md): the rows of a file (contacts/imports.py)
imported in batches by the task of contacts/tasks.py.

Each batch is one transaction that also moves the import's progress, under the import's
row lock: a task run twice, or retried after a crash, carries on where the last committed
batch left it, and never imports a row twice. New numbers are inserted in one statement
that leaves out any number a concurrent writer holds (the partial unique index decides),
so two imports of the same numbers at once create each contact once. On PostgreSQL a
batch's insert and its updates are one statement each (contacts/queries.py); elsewhere
the ORM's bulk writes.
"""

import json
import logging
import tempfile
import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.storage import default_storage
from django.core.validators import validate_email
from django.db import OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from contacts import imports, queries
from contacts.models import (
    Contact,
    ContactBlock,
    ContactGroup,
    ContactImport,
    ImportStatus,
    OnDuplicate,
)
from contacts.representations import ADDRESS_KEYS, contact_import_data, full_address
from contacts.services import adjust_live_counts, create_contact_group
from events.models import Event
from events.services import emit_event
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.core.storable import json_problem, without_unstorable

logger = logging.getLogger(__name__)

IMPORT_BATCH = 1000
# A batch that lost a deadlock to a concurrent writer is tried again this many times.
BATCH_ATTEMPTS = 3
# In English, the API's language; marked so that the admin shows them translated.
ROW_UNSTORABLE = gettext_noop("The row holds characters that cannot be stored.")
ROW_INVALID_EMAIL = gettext_noop("The email must be a valid email address.")
ROW_TOO_LONG = gettext_noop("A value is longer than 255 characters.")
ROW_NO_PHONE = gettext_noop("The phone is missing.")
ROW_GROUP_GONE = gettext_noop("The contact group was deleted during the import.")
ROW_BAD_FLAG = gettext_noop(
    "is_favorite and opted_out must be 1 or 0 (true or false, yes or no), or blank."
)
IMPORTED_TEXT_FIELDS = ("first_name", "last_name", "email")
# What a new contact takes from its row, besides the metadata.
NEW_CONTACT_FIELDS = ("phone", *IMPORTED_TEXT_FIELDS, "contact_group_id")
# What a row may set beside them: the address's parts (merged into the contact's
# address) and the yes-or-no columns.
ROW_EXTRAS = ("address", *imports.FLAGS)
# The most of a failed row's phone its error repeats.
ERROR_PHONE_LENGTH = 64
# How deep a JSON import's metadata may nest.
METADATA_DEPTH = 8


class RowRefused(Exception):
    pass


def checked_row(values: dict[str, Any]) -> dict[str, Any]:
    """A row's values as a contact takes them (RowRefused with the reason otherwise):
    the phone normalised, blank text as None, the group by name."""
    for value in values.values():
        if json_problem(value, max_depth=METADATA_DEPTH) is not None:
            raise RowRefused(ROW_UNSTORABLE)
    raw_phone = values.get("phone") or ""
    if not raw_phone:
        raise RowRefused(ROW_NO_PHONE)
    if raw_phone.startswith("00"):  # the international prefix, as Europe dials it
        raw_phone = "+" + raw_phone[2:]
    try:
        phone = normalize_phone(raw_phone)
    except InvalidPhoneNumber as error:
        raise RowRefused(str(error)) from None
    row: dict[str, Any] = {"phone": phone}
    for field in (*IMPORTED_TEXT_FIELDS, "group", *ADDRESS_KEYS):
        value = values.get(field) or None
        if value is not None and len(value) > 255:
            raise RowRefused(ROW_TOO_LONG)
        row[field] = value
    if row["email"] is not None:
        try:
            validate_email(row["email"])
        except ValidationError:
            raise RowRefused(ROW_INVALID_EMAIL) from None
    # The parts the row gives; a blank one keeps what the contact has.
    parts = {key: row.pop(key) for key in ADDRESS_KEYS}
    row["address"] = {key: value for key, value in parts.items() if value is not None} or None
    for flag in imports.FLAGS:
        row[flag] = flag_value(values.get(flag))
    row["metadata"] = values.get("metadata") or None
    return row


def flag_value(value: str | None) -> bool | None:
    """A yes-or-no cell: None when blank (the contact keeps its value)."""
    text = (value or "").strip().casefold()
    if not text:
        return None
    if text not in imports.FLAG_VALUES:
        raise RowRefused(ROW_BAD_FLAG)
    return imports.FLAG_VALUES[text]


def run_contact_import(*, import_id: int) -> str:
    """Import the rows of a stored import from where it stands, a batch at a time; its
    status at the end. Run again (a task retried, or run twice), it carries on where the
    last committed batch left it: each batch checks and moves `processed` under the
    import's row lock."""
    started = ContactImport.objects.filter(pk=import_id, status=ImportStatus.PENDING).update(
        status=ImportStatus.RUNNING, started_at=timezone.now(), updated_at=timezone.now()
    )
    contact_import = ContactImport.objects.filter(pk=import_id).first()
    if contact_import is None or contact_import.status != ImportStatus.RUNNING:
        return contact_import.status if contact_import else "missing"
    if not started:
        logger.info("Contact import %s carried on from row %s", import_id, contact_import.processed)
    try:
        rows = rows_of(contact_import)
    except imports.ImportRefused as refused:  # a workbook's sheet, read here first
        finish_import(contact_import, ImportStatus.FAILED, file_problem=refused)
        return ImportStatus.FAILED
    if len(rows) != contact_import.total:  # a workbook's, counted only now
        ContactImport.objects.filter(pk=import_id).update(total=len(rows))
    groups: dict[str, ContactGroup] = {}
    attempt = 1
    try:
        while True:
            try:
                if import_next_batch(contact_import, rows, groups):
                    break
                attempt = 1
            except OperationalError:  # a deadlock with a concurrent writer: again
                if attempt >= BATCH_ATTEMPTS:
                    raise
                attempt += 1
                groups.clear()
    except Exception:
        logger.exception("Contact import %s failed", import_id)
        finish_import(contact_import, ImportStatus.FAILED)
        return ImportStatus.FAILED
    return ImportStatus.COMPLETED


# Where imports' files are kept in the default storage until they are done.
STORAGE_FOLDER = "contact-imports"


def store_file(import_uuid: uuid.UUID, file: File, *, workbook: bool) -> str:
    """Stream a checked upload, as sent, to the default storage; its name there (`.xlsx`
    for a workbook, whose sheet the task reads, else `.csv`)."""
    file.seek(0)
    suffix = "xlsx" if workbook else "csv"
    return default_storage.save(f"{STORAGE_FOLDER}/{import_uuid}.{suffix}", file)


def store_rows(import_uuid: uuid.UUID, rows: list[list]) -> str:
    """A JSON list's rows, one JSON line each, to the default storage; its name there.
    json.dumps writes NUL and lone surrogates as escapes, so any text can be stored
    there; the task refuses such a row when it reads it back (checked_row)."""
    with tempfile.TemporaryFile() as spooled:
        for row in rows:
            spooled.write(json.dumps(row).encode() + b"\n")
        return default_storage.save(f"{STORAGE_FOLDER}/{import_uuid}.jsonl", File(spooled))


def delete_stored(name: str) -> None:
    if name:
        try:
            default_storage.delete(name)
        except OSError:  # gone already; a failed delete leaves a file, not a wrong import
            logger.warning("Could not delete the import file %s", name, exc_info=True)


def rows_of(contact_import: ContactImport) -> list[list]:
    """The import's rows, read from its stored file (a CSV file was checked when it came:
    it reads as it did then; a workbook's sheet is read and checked only here, and
    ImportRefused says why it cannot be imported); an import started by an earlier
    version from its record."""
    if contact_import.stored_file:
        with default_storage.open(contact_import.stored_file, "rb") as stored:
            if contact_import.stored_file.endswith(".jsonl"):
                return [json.loads(line) for line in stored if line.strip()]
            if contact_import.stored_file.endswith(".xlsx"):
                return imports.workbook_rows(stored)
            return imports.csv_rows(File(stored), contact_import.encoding or None)
    if contact_import.source:
        return imports.csv_rows(contact_import.source.encode())
    return contact_import.rows


def import_next_batch(
    contact_import: ContactImport, rows: list[list], groups: dict[str, ContactGroup]
) -> bool:
    """Import the next batch of rows; True when none is left (the import then finished)."""
    with transaction.atomic():
        current = (
            ContactImport.objects.defer("rows", "source")
            .select_for_update()
            .filter(pk=contact_import.pk, status=ImportStatus.RUNNING)
            .first()
        )
        if current is None:
            return True
        batch = rows[current.processed : current.processed + IMPORT_BATCH]
        if not batch:
            finish_import(current, ImportStatus.COMPLETED)
            return True
        counts, errors = import_rows(current, batch, groups)
        kept = max(0, ContactImport.ERRORS_KEPT - len(current.errors))
        ContactImport.objects.filter(pk=current.pk).update(
            processed=F("processed") + len(batch),
            created=F("created") + counts["created"],
            updated=F("updated") + counts["updated"],
            skipped=F("skipped") + counts["skipped"],
            failed=F("failed") + len(errors),
            errors=current.errors + errors[:kept],
            updated_at=timezone.now(),
        )
    return False


def finish_import(
    contact_import: ContactImport,
    status: str,
    *,
    file_problem: imports.ImportRefused | None = None,
) -> None:
    """Mark the import done, drop its rows, and emit its one contacts.imported event.
    `file_problem`: why the file could not be imported at all, its one error, in the
    shape of a row's with row 0 (the file as a whole)."""
    now = timezone.now()
    done: dict[str, Any] = {"status": status, "rows": [], "source": "", "finished_at": now}
    if file_problem is not None:
        message = file_problem.messages[0]  # its parameters filled in
        done["errors"] = [{"row": 0, "phone": "", "message": message}]
    with transaction.atomic():
        changed = ContactImport.objects.filter(
            pk=contact_import.pk, status=ImportStatus.RUNNING
        ).update(**done, updated_at=now)
        if changed:
            stored = contact_import.stored_file
            transaction.on_commit(lambda: delete_stored(stored))
            contact_import = ContactImport.objects.defer("rows", "source").get(pk=contact_import.pk)
            emit_event(
                organization_id=contact_import.organization_id,
                event=Event.CONTACTS_IMPORTED,
                data=lambda: contact_import_data(contact_import, with_errors=False),
            )


def import_rows(
    contact_import: ContactImport, batch: list[list], groups: dict[str, ContactGroup]
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """One batch, in the caller's transaction: the rows checked, the new numbers inserted
    (a number inserted meanwhile by a concurrent import is left to it and counts here as
    a duplicate), the duplicates skipped or written over."""
    errors: list[dict[str, Any]] = []
    checked: list[tuple[int, dict[str, Any]]] = []
    for number, values in batch:
        try:
            checked.append((number, checked_row(values)))
        except RowRefused as refused:
            # The phone as sent, shortened and without what the errors' jsonb cannot hold.
            phone = without_unstorable(str(values.get("phone") or ""))[:ERROR_PHONE_LENGTH]
            errors.append({"row": number, "phone": phone, "message": str(refused)})
    organization_id = contact_import.organization_id
    default_group = contact_import.contact_group_id
    group_ids = resolve_groups(contact_import, [row for _n, row in checked], groups)
    live_groups = set(
        ContactGroup.objects.live()
        .filter(pk__in={*group_ids.values(), default_group} - {None})
        .select_for_update(no_key=True)
        .values_list("pk", flat=True)
    )
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, row in checked:
        group_id = group_ids.get(row["group"]) if row["group"] else default_group
        if group_id is not None and group_id not in live_groups:
            errors.append({"row": number, "phone": row["phone"], "message": ROW_GROUP_GONE})
            continue
        row["contact_group_id"] = group_id
        rows.append((number, row))

    update = contact_import.on_duplicate == OnDuplicate.UPDATE
    # `phone != ''` spelled out: PostgreSQL proves a partial index's condition from an
    # IN list of at most 100 values, so without it a batch's look-up of 1,000 numbers
    # walked every contact of the organization instead of the unique live-phone index.
    live = Contact.objects.live().filter(organization_id=organization_id).exclude(phone="")

    def live_ids(phones: list[str]) -> dict[str, int]:
        found = live.filter(phone__in=phones).order_by("phone")
        if update:  # locked in the numbers' order, as the insert below locks its own
            found = found.select_for_update(no_key=True)
        return dict(found.values_list("phone", "pk"))

    existing = live_ids(list(dict.fromkeys(row["phone"] for _n, row in rows)))
    fresh: dict[str, dict[str, Any]] = {}
    for _number, row in rows:
        if row["phone"] not in existing and row["phone"] not in fresh:
            fresh[row["phone"]] = row
    # In the numbers' order: two imports inserting the same numbers wait for each other
    # in one order, instead of each holding what the other waits for (a deadlock).
    created = insert_new_contacts(contact_import, [fresh[phone] for phone in sorted(fresh)])
    lost = [phone for phone in fresh if phone not in created]
    if lost:  # inserted meanwhile by a concurrent import: duplicates, as found ones are
        existing.update(live_ids(sorted(lost)))

    counts = {"created": len(created), "updated": 0, "skipped": 0}
    changes: dict[int, dict[str, Any]] = {}
    first_of_new = set(created)
    for _number, row in rows:
        phone = row["phone"]
        if phone in first_of_new:
            first_of_new.discard(phone)  # this row created it; later ones are duplicates
            continue
        contact_id = existing.get(phone) or created.get(phone)
        if not update or contact_id is None:
            counts["skipped"] += 1
            continue
        merge_row(changes.setdefault(contact_id, {"id": contact_id}), row)
        counts["updated"] += 1
    if changes:
        update_contacts(list(changes.values()))
    return counts, errors


def insert_new_contacts(
    contact_import: ContactImport, rows: list[dict[str, Any]]
) -> dict[str, int]:
    """Insert the rows as contacts, leaving out each whose number a concurrent writer holds
    (the partial unique index decides, ON CONFLICT DO NOTHING); the id of each inserted,
    by number, counted in the organization's live blocks."""
    if not rows:
        return {}
    organization_id = contact_import.organization_id
    # The counters are taken after the insert, never before it: an import that held the
    # total's row while its insert waited for a number a single create held (which then
    # waited for the total) was a deadlock.
    if connection.vendor == "postgresql":
        values = [
            {
                field: value
                for field, value in new_contact_values(row).items()
                if value not in (None, "", False)
            }
            for row in rows
        ]
        inserted = queries.insert_imported(
            organization_id=organization_id,
            created_by=contact_import.created_by,
            now=timezone.now(),
            rows=values,
        )
        ids = {phone: pk for pk, phone in inserted}
    else:
        contacts = [new_contact(contact_import, row) for row in rows]
        Contact.objects.bulk_create(contacts, ignore_conflicts=True)
        by_uuid = {contact.uuid: contact.phone for contact in contacts}
        found = Contact.objects.filter(uuid__in=list(by_uuid)).values_list("pk", "uuid")
        ids = {by_uuid[contact_uuid]: pk for pk, contact_uuid in found}
    per_block: dict[int, int] = {}
    for pk in ids.values():
        per_block[pk // ContactBlock.SIZE] = per_block.get(pk // ContactBlock.SIZE, 0) + 1
    if per_block:
        adjust_live_counts(organization_id=organization_id, per_block=per_block)
    return ids


def new_contact_values(row: dict[str, Any]) -> dict[str, Any]:
    """A row's values as a new contact takes them: its address whole (every key, as the
    API writes one), a blank yes-or-no column as no."""
    return {
        **{field: row[field] for field in (*NEW_CONTACT_FIELDS, "metadata")},
        "address": full_address(row["address"]) if row["address"] else None,
        **{flag: bool(row[flag]) for flag in imports.FLAGS},
    }


def new_contact(contact_import: ContactImport, row: dict[str, Any]) -> Contact:
    return Contact(
        uuid=uuid.uuid4(),
        organization_id=contact_import.organization_id,
        created_by=contact_import.created_by,
        **new_contact_values(row),
    )


def merge_row(change: dict[str, Any], row: dict[str, Any]) -> None:
    """Add a row's update to what earlier rows of the batch give the same contact: the
    values it gives (a blank cell keeps what is there), its extra columns and address
    parts merged. A file may opt a contact out, never back in: only the contact's own
    START does that (docs/contacts.md)."""
    for field in (*IMPORTED_TEXT_FIELDS, "contact_group_id", "is_favorite"):
        if row[field] is not None:
            change[field] = row[field]
    if row["opted_out"]:
        change["opted_out"] = True
    for merged in ("metadata", "address"):
        if row[merged]:
            change[merged] = {**change.get(merged, {}), **row[merged]}


def update_contacts(changes: list[dict[str, Any]]) -> None:
    """Write each change (merge_row) over its contact, locked by the caller."""
    now = timezone.now()
    if connection.vendor == "postgresql":
        queries.update_imported(now=now, rows=changes)
        return
    contacts = Contact.objects.live().in_bulk([change["id"] for change in changes])
    for change in changes:
        contact = contacts.get(change["id"])
        if contact is None:
            continue
        for field in (*IMPORTED_TEXT_FIELDS, "contact_group_id", "is_favorite", "opted_out"):
            if field in change:
                setattr(contact, field, change[field])
        for merged in ("metadata", "address"):
            if merged in change:
                kept = getattr(contact, merged)
                setattr(
                    contact, merged, {**(kept if isinstance(kept, dict) else {}), **change[merged]}
                )
        contact.updated_at = now
    Contact.objects.live().bulk_update(
        list(contacts.values()),
        [
            "first_name",
            "last_name",
            "email",
            "contact_group",
            "metadata",
            "address",
            "is_favorite",
            "opted_out",
            "updated_at",
        ],
    )


def resolve_groups(
    contact_import: ContactImport, rows: list[dict[str, Any]], groups: dict[str, ContactGroup]
) -> dict[str, int]:
    """The id of each group the rows name, by name: the organization's live group of that
    name, created when there is none (with its group.created event)."""
    names = {row["group"] for row in rows if row["group"]} - set(groups)
    if names:
        for group in ContactGroup.objects.live().filter(
            organization_id=contact_import.organization_id, name__in=names
        ):
            groups[group.name] = group
        for name in sorted(names - set(groups)):
            try:
                groups[name] = create_contact_group(
                    organization=contact_import.organization,
                    name=name,
                    created_by=contact_import.created_by,
                )
            except ValidationError:  # created meanwhile
                groups[name] = ContactGroup.objects.live().get(
                    organization_id=contact_import.organization_id, name=name
                )
    return {name: group.pk for name, group in groups.items()}
