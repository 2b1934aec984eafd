"""Writes to contacts and contact groups. The API, the admin, sending and the
webhooks all come through here, so each rule is enforced once."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from accounts.models import Organization
from contacts.models import Contact, ContactGroup

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
    save_unique(contact, field="phone", message=DUPLICATE_PHONE)
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
    contact.deleted_at = timezone.now()
    contact.save(update_fields=["deleted_at", "updated_at"])


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
