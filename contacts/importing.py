"""Running a contacts import (docs/contacts.md): the rows read from a file
(contacts/imports.py) imported in batches by the task of contacts/tasks.py.

Each batch is one transaction that also moves the import's progress, under the import's
row lock: a task run twice, or retried after a crash, carries on where the last committed
batch left it, and never imports a row twice. New numbers are inserted in one statement
that leaves out any number a concurrent writer holds (the partial unique index decides),
so two imports of the same numbers at once create each contact once.
"""

import logging
import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import OperationalError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from contacts.models import (
    Contact,
    ContactBlock,
    ContactGroup,
    ContactImport,
    ImportStatus,
    OnDuplicate,
)
from contacts.representations import contact_import_data
from contacts.services import adjust_live_count, create_contact_group
from events.models import Event
from events.services import emit_event
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.core.storable import json_problem

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
IMPORTED_TEXT_FIELDS = ("first_name", "last_name", "email")
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
    for field in (*IMPORTED_TEXT_FIELDS, "group"):
        value = values.get(field) or None
        if value is not None and len(value) > 255:
            raise RowRefused(ROW_TOO_LONG)
        row[field] = value
    if row["email"] is not None:
        try:
            validate_email(row["email"])
        except ValidationError:
            raise RowRefused(ROW_INVALID_EMAIL) from None
    row["metadata"] = values.get("metadata") or None
    return row


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
    rows = contact_import.rows
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


def import_next_batch(
    contact_import: ContactImport, rows: list[list], groups: dict[str, ContactGroup]
) -> bool:
    """Import the next batch of rows; True when none is left (the import then finished)."""
    with transaction.atomic():
        current = (
            ContactImport.objects.defer("rows")
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


def finish_import(contact_import: ContactImport, status: str) -> None:
    """Mark the import done, drop its rows, and emit its one contacts.imported event."""
    now = timezone.now()
    with transaction.atomic():
        changed = ContactImport.objects.filter(
            pk=contact_import.pk, status=ImportStatus.RUNNING
        ).update(status=status, rows=[], finished_at=now, updated_at=now)
        if changed:
            contact_import = ContactImport.objects.defer("rows").get(pk=contact_import.pk)
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
            errors.append(
                {"row": number, "phone": str(values.get("phone") or ""), "message": str(refused)}
            )
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
    phones = list(dict.fromkeys(row["phone"] for _n, row in rows))
    found = live.filter(phone__in=phones).order_by("phone")
    if update:
        found = found.select_for_update(no_key=True)
    existing = {contact.phone: contact for contact in found}

    fresh: dict[str, Contact] = {}
    for _number, row in rows:
        if row["phone"] not in existing and row["phone"] not in fresh:
            fresh[row["phone"]] = new_contact(contact_import, row)
    # In the numbers' order: two imports inserting the same numbers wait for each other
    # in one order, instead of each holding what the other waits for (a deadlock).
    created_ids = insert_new_contacts(sorted(fresh.values(), key=lambda c: c.phone))
    lost = [phone for phone, contact in fresh.items() if contact.pk not in created_ids]
    if lost:  # inserted meanwhile by a concurrent import: duplicates, as found ones are
        more = live.filter(phone__in=lost).order_by("phone")
        if update:
            more = more.select_for_update(no_key=True)
        existing.update((contact.phone, contact) for contact in more)

    counts = {"created": len(created_ids), "updated": 0, "skipped": 0}
    changed: dict[int, Contact] = {}
    first_of_new = {phone for phone, contact in fresh.items() if contact.pk in created_ids}
    for _number, row in rows:
        phone = row["phone"]
        if phone in first_of_new:
            first_of_new.discard(phone)  # this row created it; later ones are duplicates
            continue
        contact = existing.get(phone) or fresh[phone]
        if not update or contact.pk is None:
            counts["skipped"] += 1
            continue
        apply_row(contact, row)
        changed[contact.pk] = contact
        counts["updated"] += 1
    if changed:
        now = timezone.now()
        for contact in changed.values():
            contact.updated_at = now
        Contact.objects.live().bulk_update(
            list(changed.values()),
            ["first_name", "last_name", "email", "contact_group", "metadata", "updated_at"],
        )
    return counts, errors


def new_contact(contact_import: ContactImport, row: dict[str, Any]) -> Contact:
    return Contact(
        uuid=uuid.uuid4(),
        organization_id=contact_import.organization_id,
        phone=row["phone"],
        first_name=row["first_name"],
        last_name=row["last_name"],
        email=row["email"],
        contact_group_id=row["contact_group_id"],
        metadata=row["metadata"],
        created_by=contact_import.created_by,
    )


def insert_new_contacts(contacts: list[Contact]) -> set[int]:
    """Insert the contacts, leaving out each whose number a concurrent writer holds (the
    partial unique index decides, ON CONFLICT DO NOTHING); the ids of those inserted,
    which are set on them, and counted in the organization's live blocks."""
    if not contacts:
        return set()
    organization_id = contacts[0].organization_id
    # The total's row started first, if missing, from a count without these contacts: a
    # row started after them would count them once, and each block's delta again.
    adjust_live_count(organization_id=organization_id, contact_id=0, delta=0)
    Contact.objects.bulk_create(contacts, ignore_conflicts=True)
    by_uuid = {contact.uuid: contact for contact in contacts}
    ids = set()
    per_block: dict[int, int] = {}
    for pk, contact_uuid in Contact.objects.filter(uuid__in=list(by_uuid)).values_list(
        "pk", "uuid"
    ):
        by_uuid[contact_uuid].pk = pk
        ids.add(pk)
        per_block[pk // ContactBlock.SIZE] = per_block.get(pk // ContactBlock.SIZE, 0) + 1
    for block, count in per_block.items():
        adjust_live_count(
            organization_id=organization_id, contact_id=block * ContactBlock.SIZE, delta=count
        )
    return ids


def apply_row(contact: Contact, row: dict[str, Any]) -> None:
    """An update from a row: the values it gives; a blank cell keeps what is there."""
    for field in IMPORTED_TEXT_FIELDS:
        if row[field] is not None:
            setattr(contact, field, row[field])
    if row["contact_group_id"] is not None:
        contact.contact_group_id = row["contact_group_id"]
    if row["metadata"]:
        contact.metadata = {**(contact.metadata or {}), **row["metadata"]}


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
