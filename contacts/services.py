"""Writes to contacts and contact groups. The API, the admin, sending and the
webhooks all come through here, so each rule is enforced once."""

from functools import partial
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import Organization, OrganizationRecord
from contacts import queries
from contacts.models import Contact, ContactBlock, ContactGroup
from contacts.representations import (
    contact_data,
    contact_group_data,
    deleted_contact_data,
    deleted_group_data,
    full_address,
)
from contacts.selectors import live_contact_by
from events.models import Event
from events.services import at_batch_end, emit_event, emit_events

# In English, the API's language; marked so that the admin shows them translated.
DUPLICATE_PHONE = gettext_noop("A contact with this phone already exists.")
DUPLICATE_GROUP = gettext_noop("A contact group with this name already exists.")
INVALID_GROUP = gettext_noop("The selected contact group is invalid.")


def refuse_taken(record: OrganizationRecord, *, field: str, value: Any, message: str) -> None:
    """A clear error when `value` of `field` is taken by another of the organization's live
    records. The database's partial unique index enforces it for the race this misses."""
    clash = (
        type(record)
        .objects.live()
        .filter(organization_id=record.organization_id, **{field: value})
        .exclude(pk=record.pk)
    )
    if clash.exists():
        raise ValidationError({field: [message]})


def save_unique(record: OrganizationRecord, *, field: str, message: str) -> None:
    """Save a new record whose `field` is unique among its organization's live records."""
    refuse_taken(record, field=field, value=getattr(record, field), message=message)
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError:
        raise ValidationError({field: [message]}) from None


def update_unique(
    record: OrganizationRecord, *, values: dict[str, Any], field: str, message: str
) -> None:
    """Write `values` to a live record (LiveQuerySet.update_live: Http404 if it is deleted)
    whose `field` is unique among its organization's live records."""
    if field in values:
        refuse_taken(record, field=field, value=values[field], message=message)
    try:
        with transaction.atomic():
            type(record).objects.update_live(record, **values)
    except IntegrityError:
        raise ValidationError({field: [message]}) from None


def adjust_live_count(*, organization_id: int, contact_id: int, delta: int) -> None:
    """Adds `delta` to the organization's total and to the block of `contact_id`.

    Must run in the transaction that creates or deletes the contact. A delta of 0 only
    starts the two rows when they are missing. In an event batch (the inbound webhook)
    it is written as the batch ends: the total's row is every new sender's, and its lock,
    held from this write to the commit, would make the organization's webhooks wait for
    the rest of each other's work.
    """
    at_batch_end(*queries.live_count_statement(organization_id, contact_id, delta))


def adjust_live_counts(*, organization_id: int, per_block: dict[int, int]) -> None:
    """Adds each block's delta to its row, and their sum to the total, for contacts
    created (or deleted) in bulk in the caller's transaction, after they were written:
    a missing row is started from a count that already sees them. The rows are taken in
    one order, the total first, as adjust_live_count takes them."""
    for statement in queries.live_counts_statements(organization_id, per_block):
        at_batch_end(*statement)


def recount_contact_blocks(*, organization_id: int) -> None:
    """Counts the organization's total and blocks afresh, after a bulk load that bypassed
    the services. Not safe while its contacts are being written."""
    with transaction.atomic():
        ContactBlock.objects.filter(organization_id=organization_id).delete()
        queries.recount_blocks(organization_id)


# Events (docs/events.md): emitted here, in each write's transaction, with the record as
# the API lists it (contacts/representations.py). Built only when an endpoint wants it.


def emit_contact(event: str, contact: Contact) -> None:
    emit_event(
        organization_id=contact.organization_id, event=event, data=lambda: contact_data(contact)
    )


def emit_contacts(event: str, contacts: list[Contact]) -> None:
    """`emit_contact` for many contacts of one organization: one emission."""
    if not contacts:
        return

    emit_events(
        organization_id=contacts[0].organization_id,
        event=event,
        data=lambda: [contact_data(contact) for contact in contacts],
    )


def emit_group(event: str, group: ContactGroup) -> None:
    emit_event(
        organization_id=group.organization_id, event=event, data=lambda: contact_group_data(group)
    )


def create_contact(
    *,
    organization: Organization,
    phone: str,
    first_name: str | None,
    last_name: str | None = None,
    email: str | None = None,
    contact_group: ContactGroup | None = None,
    address: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
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
        metadata=metadata or None,
        is_favorite=is_favorite,
        created_by=created_by,
    )
    # No look-up first: the partial unique index is the check, and the count write
    # takes that query's place, so a create costs what it did before the counter.
    try:
        with transaction.atomic():
            if contact_group is not None:
                hold_live_group(contact_group)
            contact.save()
            adjust_live_count(organization_id=organization.pk, contact_id=contact.pk, delta=1)
            emit_contact(Event.CONTACT_CREATED, contact)
    except IntegrityError:
        raise ValidationError({"phone": [DUPLICATE_PHONE]}) from None
    return contact


def hold_live_group(group: ContactGroup) -> None:
    """Keep `group` live until the current transaction ends, which attaches a contact to
    it; refuse it (a 400 on `contact_group`) if it was deleted meanwhile.

    The row lock makes a concurrent delete_contact_group wait for this transaction, so
    its detach sees our contact; a delete under way makes this wait, and then find the
    group deleted. FOR NO KEY UPDATE is the weakest lock Django takes that the delete's
    UPDATE waits for. SQLite ignores it: there a transaction holds the database's write
    lock from its start, so no delete can come between this check and the commit.
    """
    held = ContactGroup.objects.live().filter(pk=group.pk).select_for_update(no_key=True)
    if not held.exists():
        raise ValidationError({"contact_group": [INVALID_GROUP]})


def update_contact(*, contact: Contact, changes: dict[str, Any]) -> Contact:
    """Change only the fields given (a field given as None is cleared), and only while the
    contact is live: one deleted meanwhile is not found (Http404). `address_parts`: some
    of the address's keys, each written over the address given or, without one, the
    contact's own (the original product's flat `street`, `city`...)."""
    values = dict(changes)
    parts = values.pop("address_parts", None)
    if parts:
        base = values.get("address", contact.address)
        values["address"] = {**(base if isinstance(base, dict) else {}), **parts}
    if "address" in values:
        values["address"] = full_address(values["address"])
    if "metadata" in values:
        values["metadata"] = values["metadata"] or None
    with transaction.atomic():
        if values.get("contact_group") is not None:
            hold_live_group(values["contact_group"])
        update_unique(contact, values=values, field="phone", message=DUPLICATE_PHONE)
        emit_contact(Event.CONTACT_UPDATED, contact)
    return contact


def delete_contact(*, contact: Contact) -> None:
    """Soft-delete a live contact. One deleted already, or by a concurrent request, is not
    found (Http404), so of two concurrent deletes one succeeds and counts."""
    now = timezone.now()
    with transaction.atomic():
        Contact.objects.update_live(contact, deleted_at=now, updated_at=now)
        adjust_live_count(organization_id=contact.organization_id, contact_id=contact.pk, delta=-1)
        emit_event(
            organization_id=contact.organization_id,
            event=Event.CONTACT_DELETED,
            data=deleted_contact_data(contact, now),
        )


def contact_for_phone(
    *,
    organization: Organization,
    phone: str,
    first_name: str | None = None,
    last_name: str | None = None,
    email: str | None = None,
) -> Contact:
    """The organization's live contact for a number, created if there is none (with the
    names and email given, as the original product's send endpoints do). Every send
    asks: the written-out look-up (contacts/queries.py)."""
    contact = live_contact_by(organization_id=organization.pk, phone=phone)
    if contact is not None:
        return contact
    try:
        return create_contact(
            organization=organization,
            phone=phone,
            first_name=first_name,
            last_name=last_name,
            email=email,
        )
    except ValidationError:  # created meanwhile by a concurrent request
        return Contact.objects.live().get(organization=organization, phone=phone)


def contacts_for_phones(*, organization: Organization, phones: list[str]) -> dict[str, Contact]:
    """`contact_for_phone` for many numbers at once (a campaign's batch): the live contact
    of each, keyed by number. One look-up; for the numbers without one, one insert, one
    count per block of new ids and one contact.created emission, in one transaction. A
    number created meanwhile by someone else makes the insert fail whole: those numbers
    are then taken one by one."""
    wanted = list(dict.fromkeys(phones))
    found = {
        contact.phone: contact
        for contact in Contact.objects.live().filter(organization=organization, phone__in=wanted)
    }
    missing = [phone for phone in wanted if phone not in found]
    if not missing:
        return found
    try:
        with transaction.atomic():
            created = Contact.objects.bulk_create(
                [Contact(organization=organization, phone=phone) for phone in missing]
            )
            per_block: dict[int, int] = {}
            for contact in created:
                block = contact.pk // ContactBlock.SIZE
                per_block[block] = per_block.get(block, 0) + 1
            for block, count in per_block.items():
                adjust_live_count(
                    organization_id=organization.pk,
                    contact_id=block * ContactBlock.SIZE,
                    delta=count,
                )
            emit_contacts(Event.CONTACT_CREATED, created)
    except IntegrityError:  # one of them was created meanwhile
        created = [contact_for_phone(organization=organization, phone=phone) for phone in missing]
    found.update((contact.phone, contact) for contact in created)
    return found


def contact_for_whatsapp_user(
    *,
    organization: Organization,
    phone: str,
    user_id: str,
    profile_name: str = "",
    caller_retries: bool = False,
) -> Contact:
    """The live contact of a WhatsApp user known by their number, their business-scoped
    user id (BSUID), or both; created when there is none.

    The number wins: a user id is added to the number's contact when it has none. A
    contact known only by its user id (WhatsApp withheld the number) gains the number
    when it comes. `profile_name` (the WhatsApp profile's name) becomes the first name
    of a contact that has none.

    A contact created meanwhile by a concurrent delivery is an IntegrityError on
    creation: looked for again here, in a savepoint of its own, or, with
    `caller_retries`, raised to a caller whose own savepoint is rolled back and who
    calls again (two statements fewer per new contact on the inbound hot path).
    """
    for _attempt in range(2):
        found = partial(live_contact_by, organization_id=organization.pk)
        by_phone = found(phone=phone) if phone else None
        by_user = found(user_id=user_id) if user_id else None
        if by_phone is not None:
            if user_id and not by_phone.user_id and by_user is None:
                set_whatsapp_identity(by_phone, user_id=user_id)
            return with_profile_name(by_phone, profile_name)
        if by_user is not None:
            if phone and not by_user.phone:
                set_whatsapp_identity(by_user, phone=phone)
            return with_profile_name(by_user, profile_name)
        contact = Contact(
            organization=organization, phone=phone, user_id=user_id, first_name=profile_name or None
        )
        try:
            with transaction.atomic(savepoint=not caller_retries):
                contact.save()
                adjust_live_count(organization_id=organization.pk, contact_id=contact.pk, delta=1)
                emit_contact(Event.CONTACT_CREATED, contact)
        except IntegrityError:  # created meanwhile by a concurrent delivery: look again
            if caller_retries:
                raise
            continue
        return contact
    raise ValueError("the contact of a WhatsApp user could not be found or created")


def with_profile_name(contact: Contact, profile_name: str) -> Contact:
    """A contact without a first name takes the profile's name: a name someone gave it
    meanwhile is kept (the update is conditional)."""
    if contact.first_name is not None or not profile_name:
        return contact
    with transaction.atomic():
        named = Contact.objects.live().filter(pk=contact.pk, first_name__isnull=True)
        if named.update(first_name=profile_name, updated_at=timezone.now()):
            contact.first_name = profile_name
            emit_contact(Event.CONTACT_UPDATED, contact)
    return contact


def set_whatsapp_identity(contact: Contact, **values: str) -> None:
    """Add a number or user id to a contact; one taken meanwhile by another contact is
    left out (the unique indexes decide), the contact stays as it was."""
    before = {field: getattr(contact, field) for field in values}
    try:
        with transaction.atomic():
            Contact.objects.filter(pk=contact.pk).update(**values, updated_at=timezone.now())
            for field, value in values.items():
                setattr(contact, field, value)
            emit_contact(Event.CONTACT_UPDATED, contact)
    except IntegrityError:
        for field, value in before.items():
            setattr(contact, field, value)


def move_whatsapp_user(
    *,
    organization: Organization,
    old_phone: str = "",
    new_phone: str = "",
    old_user_id: str = "",
    new_user_id: str = "",
) -> Contact:
    """A user's new number (or new user id): their contact moves to it, keeping its chats,
    names and group. When the new one already has its own contact, that one is used and
    the old contact is left as it is (two histories are not merged silently)."""
    live = Contact.objects.live().filter(organization=organization)
    if new_phone:
        old = live.filter(phone=old_phone).first() if old_phone else None
        existing = live.filter(phone=new_phone).first()
        if old is not None and existing is None:
            set_whatsapp_identity(old, phone=new_phone)
            if old.phone == new_phone:
                return old
        return contact_for_whatsapp_user(organization=organization, phone=new_phone, user_id="")
    old = live.filter(user_id=old_user_id).first() if old_user_id else None
    existing = live.filter(user_id=new_user_id).first()
    if old is not None and existing is None:
        set_whatsapp_identity(old, user_id=new_user_id)
        if old.user_id == new_user_id:
            return old
    return contact_for_whatsapp_user(organization=organization, phone="", user_id=new_user_id)


def create_contact_group(
    *, organization: Organization, name: str, created_by: int = 0
) -> ContactGroup:
    group = ContactGroup(organization=organization, name=name, created_by=created_by)
    with transaction.atomic():
        save_unique(group, field="name", message=DUPLICATE_GROUP)
        emit_group(Event.GROUP_CREATED, group)
    return group


def update_contact_group(*, group: ContactGroup, changes: dict[str, Any]) -> ContactGroup:
    """Change only the fields given, while the group is live (Http404 otherwise)."""
    with transaction.atomic():
        update_unique(group, values=changes, field="name", message=DUPLICATE_GROUP)
        emit_group(Event.GROUP_UPDATED, group)
    return group


@transaction.atomic
def delete_contact_group(*, group: ContactGroup) -> None:
    """Soft-delete a live group (Http404 otherwise) and detach its contacts, which stay.

    The group's row is written first: its lock waits for every transaction attaching a
    contact to the group (hold_live_group), so the detach that follows sees them all.
    """
    now = timezone.now()
    ContactGroup.objects.update_live(group, deleted_at=now, updated_at=now)
    Contact.objects.filter(contact_group_id=group.pk).update(contact_group=None, updated_at=now)
    emit_event(
        organization_id=group.organization_id,
        event=Event.GROUP_DELETED,
        data=deleted_group_data(group, now),
    )
