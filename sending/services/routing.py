"""Which of the organization's numbers a send goes from, and which message it answers
(docs/numbers.md):

1. the number its `from` names (a uuid, a phone number id or a display number; an
   unknown one is a ValidationError on `from`);
2. a reply (`reply_to`) goes from the number of the chat it answers;
3. otherwise from the number the contact last wrote to;
4. otherwise from the default number.

An organization with one number (nearly all) is answered from the numbers read with it,
with no query for 2 and 3.
"""

import re
import uuid
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from accounts.models import Organization
from business_numbers.models import Number, numbers_of
from business_numbers.selectors import find_number
from contacts.models import Contact
from sending.models import Chat, ChatType

# A WhatsApp message id: `wamid.` and base64, as Graph gives them (or the sandbox's).
MESSAGE_ID = re.compile(r"^[A-Za-z0-9._=+/:-]{1,255}$")
REPLY_TO_UNKNOWN = "No chat of this organization has that uuid."
REPLY_TO_WITHOUT_ID = "That chat has no WhatsApp message id to reply to."
REPLY_TO_INVALID = "Give a chat uuid or a WhatsApp message id."
FROM_UNKNOWN = "No number of this organization has that uuid, phone number id or display number."


@dataclass(frozen=True)
class Route:
    number: Number  # the number the message goes from
    answered: str | None = None  # the WhatsApp message id it replies to


def route(
    organization: Organization,
    *,
    sender: Number | str | None = None,
    phone: str | None = None,
    contact: Contact | None = None,
    reply_to: str | None = None,
) -> Route:
    """The number a send goes from and the message it answers; ValidationErrors on
    `from` and `reply_to` before anything is sent."""
    replied_number_id = None
    answered = None
    if reply_to:
        answered, replied_number_id = replied_message(organization, reply_to)
    if isinstance(sender, Number):
        return Route(sender, answered)
    if sender:
        named = find_number(organization, sender)
        if named is None:
            raise ValidationError({"from": [FROM_UNKNOWN]})
        return Route(named, answered)
    numbers = numbers_of(organization)
    if len(numbers) <= 1:
        return Route(numbers[0] if numbers else Number.objects.default_for(organization), answered)
    by_id = {number.pk: number for number in numbers}
    if reply_to and replied_number_id is None and answered:
        replied_number_id = number_of_message(organization, answered)
    if replied_number_id in by_id:
        return Route(by_id[replied_number_id], answered)
    written = last_written_number(organization, phone=phone, contact=contact)
    if written in by_id:
        return Route(by_id[written], answered)
    return Route(Number.objects.default_for(organization), answered)


def replied_message(organization: Organization, reply_to: str) -> tuple[str, int | None]:
    """The WhatsApp message id `reply_to` names and, for a chat named by uuid, the number
    of that chat: a chat of the organization (another organization's is as unknown as a
    missing one), or the message id itself."""
    try:
        chat_uuid = uuid.UUID(reply_to)
    except ValueError:
        if not MESSAGE_ID.match(reply_to):
            raise ValidationError({"reply_to": [REPLY_TO_INVALID]}) from None
        return reply_to, None
    found = list(
        Chat.objects.live()
        .filter(organization=organization, uuid=chat_uuid)
        .values_list("wam_id", "number_id")
    )
    if not found:
        raise ValidationError({"reply_to": [REPLY_TO_UNKNOWN]})
    wam_id, number_id = found[0]
    if not wam_id:
        raise ValidationError({"reply_to": [REPLY_TO_WITHOUT_ID]})
    return wam_id, number_id


def number_of_message(organization: Organization, wam_id: str) -> int | None:
    return (
        Chat.objects.filter(organization=organization, wam_id=wam_id)
        .values_list("number_id", flat=True)
        .first()
    )


def last_written_number(
    organization: Organization, *, phone: str | None, contact: Contact | None
) -> int | None:
    """The number the contact (or the contact of this phone) last wrote to, if any."""
    inbound = Chat.objects.filter(organization=organization, type=ChatType.INBOUND)
    if contact is not None:
        inbound = inbound.filter(contact=contact)
    elif phone:
        inbound = inbound.filter(contact__phone=phone, contact__organization=organization)
    else:
        return None
    return inbound.order_by("-id").values_list("number_id", flat=True).first()
