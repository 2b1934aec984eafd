"""Placeholders in the texts the service writes to a contact for the business: canned
replies (and the bodies of interactive ones), and the inbox's canned-reply insertion.

`{first_name}`, `{last_name}`, `{full_name}`, `{email}`, `{phone}`, `{group}`,
`{organization_name}`, `{full_address}`, `{street}`, `{city}`, `{state}`, `{zip_code}`,
`{country}`, and the keys of the contact's `metadata` (lower case, spaces as
underscores: an import's column "Plan Name" is `{plan_name}`), as the original product
writes them. A known name whose value the contact lacks becomes empty text; an unknown
name is left as written (so `{{1}}` and stray braces survive). Free-form API sends are
never rewritten: only the callers named above fill placeholders. See
docs/canned-replies.md.
"""

import re
from typing import Any

from contacts.models import Contact, ContactGroup
from contacts.representations import ADDRESS_KEYS

PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+)\}")
# The contact's own fields; the metadata's keys come after them and never replace them.
NAMES = (
    "first_name",
    "last_name",
    "full_name",
    "email",
    "phone",
    "group",
    "organization_name",
    "full_address",
    "street",
    "city",
    "state",
    "zip_code",
    "country",
)


def has_placeholders(text: str) -> bool:
    return PLACEHOLDER.search(text) is not None


def contact_values(contact: Contact, *, organization_name: str) -> dict[str, str]:
    """What each placeholder name stands for, for this contact. `{group}` costs a query
    when the contact's group is not loaded yet, so callers ask only for texts that have
    placeholders (`fill_placeholders` does)."""
    address = contact.address if isinstance(contact.address, dict) else {}
    parts = {key: text_of(address.get(key)) for key in ADDRESS_KEYS}
    values = {
        "first_name": contact.first_name or "",
        "last_name": contact.last_name or "",
        "full_name": contact.full_name.strip(),
        "email": contact.email or "",
        "phone": f"+{contact.phone}" if contact.phone else "",
        "group": group_name(contact),
        "organization_name": organization_name,
        "full_address": ", ".join(part for part in parts.values() if part),
        "street": parts["street"],
        "city": parts["city"],
        "state": parts["state"],
        "zip_code": parts["zip"],
        "country": parts["country"],
    }
    metadata = contact.metadata if isinstance(contact.metadata, dict) else {}
    for key, value in metadata.items():
        name = str(key).strip().lower().replace(" ", "_")
        if name not in values:
            values[name] = text_of(value)
    return values


def group_name(contact: Contact) -> str:
    if contact.contact_group_id is None:
        return ""
    group = ContactGroup.objects.filter(pk=contact.contact_group_id, deleted_at__isnull=True)
    return group.values_list("name", flat=True).first() or ""


def text_of(value: Any) -> str:
    """A value as text in a message: numbers and texts as written; nothing for null, and
    for objects and lists, which have no one way to be read."""
    if value is None or isinstance(value, dict | list):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def fill_placeholders(text: str, contact: Contact, *, organization_name: str) -> str:
    """`text` with every known placeholder replaced by the contact's value (empty when the
    contact has none); unknown names left as written. No query when there is nothing to
    fill."""
    if not has_placeholders(text):
        return text
    values = contact_values(contact, organization_name=organization_name)

    def value(match: re.Match) -> str:
        return values.get(match.group(1), match.group(0))

    return PLACEHOLDER.sub(value, text)
