"""Writes to contacts and contact groups. The API, the admin, sending and the
webhooks all come through here, so each rule is enforced once."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from accounts.models import Organization
from contacts.models import Contact, ContactCount, ContactGroup

ADDRESS_KEYS = ("street", "city", "state", "zip", "country")
DUPLICATE_PHONE = "A contact with this phone already exists."
DUPLICATE_GROUP = "A contact group with this name already exists."


def save_unique(record: models.Model, *, field: str, message: str) -> None:
    """Save a record whose `field` is unique among its organization's live records.

    Checked first for a clear error, and enforced by the database's partial unique
    index for the race the check cannot see.
    """
    clash = (
        type(record)
        .objects.live()
        .filter(organization_id=record.organization_id, **{field: getattr(record, field)})
        .exclude(pk=record.pk)
    )
    if clash.exists():
        raise ValidationError({field: [message]})
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError:
        raise ValidationError({field: [message]}) from None


# One statement that adds `delta` to the organization's live-contact counter, or starts
# the counter when it has none yet. A missing counter is started from a count made in
# this transaction, so it already includes this transaction's own change; if another
# transaction starts it at the same time, ON CONFLICT waits for that one to commit and
# then adds our delta to its count, which could not see our uncommitted row. When the
# counter exists, NOT EXISTS is false, so the count reads no contact row at all.
ADJUST_COUNT_SQL = """
INSERT INTO {counter} (organization_id, live)
SELECT %s, COUNT(*) FROM {contact}
WHERE organization_id = %s AND deleted_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM {counter} WHERE organization_id = %s)
ON CONFLICT (organization_id) DO UPDATE SET live = {counter}.live + %s
"""

# The counter, or a plain count for an organization whose counter has not started
# (contacts written before it existed, or by hand). COALESCE stops at the first value,
# so the count runs only when there is no counter row.
LIVE_COUNT_SQL = """
SELECT COALESCE(
  (SELECT live FROM {counter} WHERE organization_id = %s),
  (SELECT COUNT(*) FROM {contact} WHERE organization_id = %s AND deleted_at IS NULL)
)
"""


def table_names() -> dict[str, str]:
    quote = connection.ops.quote_name
    return {"counter": quote(ContactCount._meta.db_table), "contact": quote(Contact._meta.db_table)}


def adjust_live_count(*, organization_id: int, delta: int) -> None:
    """Must run in the transaction that creates or deletes the contacts."""
    with connection.cursor() as cursor:
        cursor.execute(
            ADJUST_COUNT_SQL.format(**table_names()),
            [organization_id, organization_id, organization_id, delta],
        )


def live_contact_count(*, organization_id: int) -> int:
    """The exact number of the organization's live contacts, without counting them."""
    with connection.cursor() as cursor:
        cursor.execute(LIVE_COUNT_SQL.format(**table_names()), [organization_id, organization_id])
        return cursor.fetchone()[0]


def full_address(address: dict[str, Any] | None) -> dict[str, Any] | None:
    """All five keys, each a string or null, in the documented order."""
    if address is None:
        return None
    return {key: address.get(key) for key in ADDRESS_KEYS}


def create_contact(
    *,
    organization: Organization,
    phone: str,
    first_name: str | None,
    last_name: str | None = None,
    email: str | None = None,
    contact_group: ContactGroup | None = None,
    address: dict[str, Any] | None = None,
    is_favorite: bool = False,
    created_by: int = 0,
) -> Contact:
    contact = Contact(
        organization=organization,
        phone=phone,
        first_name=first_name,
        last_name=last_name,
        email=email,
        contact_group=contact_group,
        address=full_address(address),
        is_favorite=is_favorite,
        created_by=created_by,
    )
    # No look-up first: the partial unique index is the check, and the counter write
    # takes that query's place, so a create costs what it did before the counter.
    try:
        with transaction.atomic():
            contact.save()
            adjust_live_count(organization_id=organization.pk, delta=1)
    except IntegrityError:
        raise ValidationError({"phone": [DUPLICATE_PHONE]}) from None
    return contact


def update_contact(*, contact: Contact, changes: dict[str, Any]) -> Contact:
    """Change only the fields given; a field given as None is cleared."""
    for field, value in changes.items():
        if field == "address":
            value = full_address(value)
        setattr(contact, field, value)
    save_unique(contact, field="phone", message=DUPLICATE_PHONE)
    return contact


def delete_contact(*, contact: Contact) -> None:
    now = timezone.now()
    with transaction.atomic():
        # Only a live row is deleted, so two concurrent deletes count once.
        deleted = (
            Contact.objects.live().filter(pk=contact.pk).update(deleted_at=now, updated_at=now)
        )
        if deleted:
            adjust_live_count(organization_id=contact.organization_id, delta=-1)
    contact.deleted_at = contact.updated_at = now


def contact_for_phone(*, organization: Organization, phone: str) -> Contact:
    """The organization's live contact for a number, created (names empty) if there is none."""
    contact = Contact.objects.live().filter(organization=organization, phone=phone).first()
    if contact is not None:
        return contact
    try:
        return create_contact(organization=organization, phone=phone, first_name=None)
    except ValidationError:  # created meanwhile by a concurrent request
        return Contact.objects.live().get(organization=organization, phone=phone)


def create_contact_group(
    *, organization: Organization, name: str, created_by: int = 0
) -> ContactGroup:
    group = ContactGroup(organization=organization, name=name, created_by=created_by)
    save_unique(group, field="name", message=DUPLICATE_GROUP)
    return group


def update_contact_group(*, group: ContactGroup, changes: dict[str, Any]) -> ContactGroup:
    for field, value in changes.items():
        setattr(group, field, value)
    save_unique(group, field="name", message=DUPLICATE_GROUP)
    return group


@transaction.atomic
def delete_contact_group(*, group: ContactGroup) -> None:
    """Soft-delete the group and detach its contacts, which stay."""
    group.contacts.update(contact_group=None, updated_at=timezone.now())
    group.deleted_at = timezone.now()
    group.save(update_fields=["deleted_at", "updated_at"])
