"""Contacts and groups as the API lists them (api.md's shapes), for the API, the
events and the admin alike."""

import json
from datetime import datetime
from typing import Any

from contacts.models import Contact, ContactGroup, ContactImport
from messaging_project.core.formats import iso_datetime, json_text, laravel_datetime
from messaging_project.core.phones import formatted_phone

ADDRESS_KEYS = ("street", "city", "state", "zip", "country")


def full_address(address: dict[str, Any] | None) -> dict[str, Any] | None:
    """All five keys, each a string or null, in the documented order."""
    if address is None:
        return None
    return {key: address.get(key) for key in ADDRESS_KEYS}


def contact_data(contact: Contact) -> dict[str, Any]:
    return {
        "id": contact.id,
        "uuid": str(contact.uuid),
        "organization_id": contact.organization_id,
        "first_name": contact.first_name,
        "last_name": contact.last_name,
        "phone": contact.phone,
        "email": contact.email,
        "avatar": contact.avatar,
        "address": json_text(full_address(contact.address)),  # jsonb does not keep key order
        "contact_group_id": contact.contact_group_id,
        "is_favorite": int(contact.is_favorite),
        "opted_out": int(contact.opted_out),
        # The business-scoped user id WhatsApp gave (docs/webhooks.md); for a user whose
        # number WhatsApp withholds, the one thing that tells the contact apart.
        "user_id": contact.user_id,
        # An import's extra columns, JSON-encoded like the address; null when none.
        "metadata": json_text(contact.metadata) if contact.metadata else None,
        "created_by": contact.created_by,
        "created_at": laravel_datetime(contact.created_at),
        "updated_at": laravel_datetime(contact.updated_at),
        "deleted_at": laravel_datetime(contact.deleted_at),
        "full_name": contact.full_name,
        # Appended by the original product to every contact: the number for people.
        "formatted_phone_number": formatted_phone(contact.phone),
    }


def contact_group_data(group: ContactGroup) -> dict[str, Any]:
    return {
        "id": group.id,
        "uuid": str(group.uuid),
        "organization_id": group.organization_id,
        "name": group.name,
        "created_by": group.created_by,
        "created_at": iso_datetime(group.created_at),
        "updated_at": iso_datetime(group.updated_at),
        "deleted_at": iso_datetime(group.deleted_at),
    }


def deleted_contact_data(contact: Contact, deleted_at: datetime) -> dict[str, Any]:
    """What a contact.deleted event carries: the contact's uuid and when it went."""
    return {"uuid": str(contact.uuid), "deleted_at": laravel_datetime(deleted_at)}


def deleted_group_data(group: ContactGroup, deleted_at: datetime) -> dict[str, Any]:
    """What a group.deleted event carries, in the groups' own date style."""
    return {"uuid": str(group.uuid), "deleted_at": iso_datetime(deleted_at)}


def contact_import_data(contact_import: ContactImport, *, with_errors: bool = True) -> dict:
    """An import's progress, as GET /api/contacts/imports/{uuid} shows it (the
    contacts.imported event leaves the errors out)."""
    data = {
        "uuid": str(contact_import.uuid),
        "status": contact_import.status,
        "on_duplicate": contact_import.on_duplicate,
        "total": contact_import.total,
        "processed": contact_import.processed,
        "created": contact_import.created,
        "updated": contact_import.updated,
        "skipped": contact_import.skipped,
        "failed": contact_import.failed,
        "created_at": iso_datetime(contact_import.created_at),
        "started_at": iso_datetime(contact_import.started_at),
        "finished_at": iso_datetime(contact_import.finished_at),
    }
    if with_errors:
        data["errors"] = contact_import.errors
    return data


# The export's columns: the import's own, so that an export imports back as it was.
EXPORT_COLUMNS = [
    "first_name",
    "last_name",
    "phone",
    "email",
    "group",
    *ADDRESS_KEYS,
    "is_favorite",
    "opted_out",
    "metadata",
]
# Before the header: Excel reads a CSV file as UTF-8 only when it starts with this mark.
BYTE_ORDER_MARK = "\ufeff"


def export_row(
    first_name: str | None,
    last_name: str | None,
    phone: str,
    email: str | None,
    group: str | None,
    address: dict | None,
    is_favorite: bool,
    opted_out: bool,
    metadata: dict | None,
) -> list[str]:
    """One contact as a row of the export: the number with its plus, the group by name,
    the address's parts, 1 or 0 for the two flags, the metadata as a JSON object (empty
    when there is none), all text as text (no `\\u` escapes); text a spreadsheet would
    run as a formula marked as text (safe_cell)."""
    parts = address if isinstance(address, dict) else {}
    return [
        safe_cell(first_name or ""),
        safe_cell(last_name or ""),
        # Digits after a plus (a stored phone has nothing else) are a number to a
        # spreadsheet, never a formula: written as they are (docs/contacts.md).
        f"+{phone}" if phone else "",
        safe_cell(email or ""),
        safe_cell(group or ""),
        *(safe_cell(str(parts.get(key) or "")) for key in ADDRESS_KEYS),
        "1" if is_favorite else "0",
        "1" if opted_out else "0",
        # An object: starts with `{`, never a formula.
        json.dumps(metadata, ensure_ascii=False, separators=(",", ":")) if metadata else "",
    ]


# What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Written before such a cell: a spreadsheet shows the rest as text; the import drops it.
TEXT_MARK = "'"


def safe_cell(value: str) -> str:
    """The value as an exported cell: with a leading `'` when it starts a formula."""
    return TEXT_MARK + value if value.startswith(FORMULA_STARTS) else value


def unmarked_cell(value: str) -> str:
    """An imported cell without the `'` safe_cell put before a formula's start."""
    if value.startswith(TEXT_MARK) and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value
