"""The webhook's news about customers and the conversation (the
"Customers and the conversation" section of docs/webhooks.md):

- `user_preferences`: a customer who stops (or resumes) marketing messages is opted out
  of campaigns (or back in), exactly as an inbound STOP (START) does (contacts.opt_outs);
- `smb_message_echoes`, and `message_echoes` inside a `messages` change: a message the
  business sent from the WhatsApp Business app, recorded as an outbound chat of source
  `business_app`, with its message.sent event and never an auto-reply;
- `history`: the Business app's past messages, recorded as chats with their own times,
  oldest first, without auto-replies or events per message: one history.imported event
  for the change, with its counts; the media ids WhatsApp sends later, in `history`
  changes whose `messages` stand outside any thread, reach the messages imported before.

A change for another phone number of the same Meta app is counted and left alone, as
for messages. Every item is recorded once: a message id is unique per organization, so a
redelivered echo or history chunk is counted as duplicates and changes nothing, and a
preference that changes nothing emits nothing.
"""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import IntegrityError, transaction

from accounts.models import Organization
from business_numbers.models import Number
from contacts.models import Contact
from contacts.opt_outs import set_opted_out
from events.models import Event
from events.services import emit_event
from inbound.services.message_items import (
    Sender,
    attach_media,
    change_original,
    contact_of,
    media_id_of,
    message_metadata,
    number_for,
    sender_of,
    whatsapp_time,
)
from inbound.services.webhook_items import (
    WebhookSummary,
    as_dict,
    as_list,
    guarded,
    message_id,
)
from messaging_project.core.formats import iso_datetime
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.core.storable import is_storable_json
from sending.models import Chat, ChatSource, ChatStatus, ChatType
from sending.queries import hold_message_ids
from sending.services import insert_chat
from sending.services.events import emit_chat
from sending.services.statuses import apply_kept_statuses

logger = logging.getLogger(__name__)

# `user_preferences` values: whether the customer is opted out after it.
PREFERENCES = {"stop": True, "resume": False}
MARKETING = "marketing_messages"
# Where a past message without a usable time sorts: first.
EARLIEST = datetime.min.replace(tzinfo=UTC)

# A past message's `history_context.status` as the chat's status (business messages only;
# a customer's is `received`). Anything else was at least sent.
HISTORY_STATUSES = {
    "pending": ChatStatus.ACCEPTED,
    "server_ack": ChatStatus.SENT,
    "sent": ChatStatus.SENT,
    "delivery_ack": ChatStatus.DELIVERED,
    "delivered": ChatStatus.DELIVERED,
    "read": ChatStatus.READ,
    "played": ChatStatus.PLAYED,
    "error": ChatStatus.FAILED,
    "failed": ChatStatus.FAILED,
}


def ours(organization: Organization, value: dict, summary: WebhookSummary) -> Number | None:
    """The organization's number a change is for (message_items.number_for); one for
    another number of the same Meta app is counted and left alone (None)."""
    number = number_for(organization, value)
    if number is None:
        summary.other_number += 1
        logger.info("Webhook change for another number, organization %s", organization.pk)
    return number


def user_of(item: dict, phone_key: str, user_id_key: str, contacts: list[dict]) -> Sender:
    """The WhatsApp user an item names under other keys than a message's `from` (an
    echo's `to`, a preference's `wa_id`), read as a sender is (its profile included)."""
    named = {"from": item.get(phone_key), "from_user_id": item.get(user_id_key)}
    return sender_of({key: value for key, value in named.items() if value}, contacts)


# Marketing preferences -----------------------------------------------------------------


def record_user_preferences(
    organization: Organization, value: dict, summary: WebhookSummary
) -> None:
    if not ours(organization, value, summary):
        return
    contacts = [as_dict(contact) for contact in as_list(value.get("contacts"))]
    for item in as_list(value.get("user_preferences")):
        guarded(apply_preference, organization, as_dict(item), summary, contacts)


def apply_preference(
    organization: Organization, item: dict, summary: WebhookSummary, contacts: list[dict]
) -> None:
    """Stop or resume marketing messages: the contact (created when new, as an inbound
    message would) is opted out or back in; contact.updated when that changed it."""
    category, choice = item.get("category"), item.get("value")
    if category != MARKETING or choice not in PREFERENCES:
        raise ValueError(f"unknown preference {str(category)[:40]!r}: {str(choice)[:40]!r}")
    # The item's own user, never another entry of contacts[] (whose profile or user id
    # would name someone else): an item that names nobody is skipped.
    if item.get("wa_id") in (None, "") and item.get("user_id") in (None, ""):
        raise KeyError("wa_id")
    contact = contact_of(organization, user_of(item, "wa_id", "user_id", contacts))
    set_opted_out(contact_id=contact.pk, opted_out=PREFERENCES[choice])
    summary.preferences += 1


# Messages sent from the WhatsApp Business app ------------------------------------------


def record_business_app_echoes(
    organization: Organization, value: dict, summary: WebhookSummary
) -> None:
    """The `smb_message_echoes` field."""
    if number := ours(organization, value, summary):
        record_echoes(organization, value, summary, number)


def record_echoes(
    organization: Organization, value: dict, summary: WebhookSummary, number: Number
) -> None:
    """A change's `message_echoes` (to `number`'s customers), each in its own savepoint."""
    contacts = [as_dict(contact) for contact in as_list(value.get("contacts"))]
    for echo in as_list(value.get("message_echoes")):
        echo = as_dict(echo)
        try:
            guarded(record_echo, organization, echo, summary, contacts, number)
        except IntegrityError:
            if not Chat.objects.filter(organization=organization, wam_id=echo["id"]).exists():
                raise
            summary.duplicates += 1


def record_echo(
    organization: Organization,
    echo: dict,
    summary: WebhookSummary,
    contacts: list[dict],
    number: Number,
) -> None:
    wam_id = message_id(echo)
    kind = echo.get("type")
    if kind in ("edit", "revoke") and change_original(
        organization, echo, wam_id, summary, chat_type=ChatType.OUTBOUND
    ):
        return
    contact = contact_of(organization, user_of(echo, "to", "to_user_id", contacts))
    metadata, _ = message_metadata(echo)
    if not is_storable_json(metadata):
        raise ValueError(f"echo {wam_id} holds what a database cannot store")
    # Statuses of an echo may come first: they wait for it (sending/services/statuses.py).
    hold_message_ids(organization.pk, [wam_id])
    chat = insert_chat(
        Chat(
            organization=organization,
            number=number,
            contact=contact,
            wam_id=wam_id,
            type=ChatType.OUTBOUND,
            status=ChatStatus.SENT,
            source=ChatSource.BUSINESS_APP,
            sent_at=whatsapp_time(echo),
            metadata=metadata,
        )
    )
    summary.echoes += 1
    attach_media(chat, echo)
    apply_kept_statuses(chat)
    emit_chat(Event.MESSAGE_SENT, chat)


# History --------------------------------------------------------------------------------


@dataclass
class Imported:
    """What one `history` change brought: the history.imported event's counts."""

    imported: int = 0
    duplicates: int = 0
    skipped: int = 0
    oldest: datetime | None = None
    newest: datetime | None = None

    def add(self, sent_at: datetime | None) -> None:
        self.imported += 1
        if sent_at is not None:
            self.oldest = min(self.oldest or sent_at, sent_at)
            self.newest = max(self.newest or sent_at, sent_at)


def record_history(organization: Organization, value: dict, summary: WebhookSummary) -> None:
    """Every message of every thread of every chunk, oldest first; then one
    history.imported event when anything new was recorded (a redelivery records nothing,
    so emits nothing)."""
    number = ours(organization, value, summary)
    if number is None:
        return
    counts = Imported()
    chunks = [as_dict(chunk) for chunk in as_list(value.get("history"))]
    past: list[tuple[Contact, dict]] = later_media(organization, value, summary, counts)
    for chunk in chunks:
        for error in as_list(chunk.get("errors")):  # the business declined to share
            logger.info("History of organization %s not shared: %r", organization.pk, error)
        for thread in as_list(chunk.get("threads")):
            thread = as_dict(thread)
            messages = [as_dict(message) for message in as_list(thread.get("messages"))]
            contact = thread_contact(organization, thread)
            if contact is None:  # skipped, with every message of the thread
                summary.skipped += len(messages)
                counts.skipped += len(messages)
                continue
            past += [(contact, message) for message in messages]
    past.sort(key=lambda pair: whatsapp_time(pair[1]) or EARLIEST)
    for contact, message in past:
        record_new_past_message(organization, message, summary, contact, counts, number)
    if counts.imported:
        emit_event(
            organization_id=organization.pk,
            event=Event.HISTORY_IMPORTED,
            data=lambda: history_data(chunks, counts),
        )


def later_media(
    organization: Organization, value: dict, summary: WebhookSummary, counts: Imported
) -> list[tuple[Contact, dict]]:
    """The past messages a `history` change carries at its top level, outside any thread:
    WhatsApp sends the media ids of imported media messages in such later webhooks. Each
    is the customer's (its `to`, on the business's own messages, else its `from`): a
    message imported before takes its media (record_new_past_message), one not seen yet
    is imported with it."""
    past = []
    for message in as_list(value.get("messages")):
        message = as_dict(message)
        customer = message.get("to") or message.get("from")
        contact = thread_contact(organization, {"id": customer})
        if contact is None:
            summary.skipped += 1
            counts.skipped += 1
            continue
        past.append((contact, message))
    return past


def thread_contact(organization: Organization, thread: dict) -> Contact | None:
    """The customer a thread is with (its `id` is their number), in its own savepoint so
    that a contact written here is never lost with a message rolled back later. None
    when the thread names no usable number: its messages are skipped."""
    try:
        with transaction.atomic():
            return contact_of(organization, sender_of({"from": thread["id"]}, []))
    except (KeyError, TypeError, ValueError, InvalidPhoneNumber) as error:
        logger.warning("Skipped a history thread of organization %s: %r", organization.pk, error)
        return None


def record_new_past_message(
    organization: Organization,
    message: dict,
    summary: WebhookSummary,
    contact: Contact,
    counts: Imported,
    number: Number,
) -> None:
    skipped = summary.skipped
    try:
        guarded(record_past_message, organization, message, summary, contact, counts, number)
    except IntegrityError:
        recorded = Chat.objects.filter(organization=organization, wam_id=message["id"]).first()
        if recorded is None:
            raise
        summary.duplicates += 1
        counts.duplicates += 1
        if recorded.media_id is None and media_id_of(message):
            guarded(add_media, organization, message, summary, recorded)
    counts.skipped += summary.skipped - skipped


def record_past_message(
    organization: Organization,
    message: dict,
    summary: WebhookSummary,
    contact: Contact,
    counts: Imported,
    number: Number,
) -> None:
    wam_id = message_id(message)
    # From the business's number (with `to`, as an echo), or from the customer's.
    sender = message.get("from")
    outbound = "to" in message or (
        sender not in (None, "") and normalize_phone(str(sender)) != contact.phone
    )
    metadata, _ = message_metadata(message)
    if not is_storable_json(metadata):
        raise ValueError(f"past message {wam_id} holds what a database cannot store")
    said = str(as_dict(message.get("history_context")).get("status", "")).casefold()
    sent_at = whatsapp_time(message)
    chat = insert_chat(
        Chat(
            organization=organization,
            number=number,
            contact=contact,
            wam_id=wam_id,
            type=ChatType.OUTBOUND if outbound else ChatType.INBOUND,
            status=HISTORY_STATUSES.get(said, ChatStatus.SENT) if outbound else ChatStatus.RECEIVED,
            source=ChatSource.BUSINESS_APP if outbound else ChatSource.CUSTOMER,
            sent_at=sent_at,
            metadata=metadata,
        )
    )
    summary.imported += 1
    counts.add(sent_at)
    if media_id_of(message):  # only recent media has one; it may come in a later chunk
        attach_media(chat, message)


def add_media(
    organization: Organization, message: dict, summary: WebhookSummary, chat: Chat
) -> None:
    """A past media message seen before without its media id (WhatsApp sends the ids of
    recent media in later history webhooks): the chat takes the message with its media."""
    metadata, _ = message_metadata(message)
    if not is_storable_json(metadata):
        raise ValueError(f"past message {chat.wam_id} holds what a database cannot store")
    Chat.objects.filter(pk=chat.pk).update(metadata=metadata)
    chat.metadata = metadata
    with transaction.atomic():
        attach_media(chat, message)


def history_data(chunks: list[dict], counts: Imported) -> dict:
    """The history.imported event's data (docs/events.md)."""
    progress = [as_dict(chunk.get("metadata")) for chunk in chunks]
    return {
        "imported": counts.imported,
        "duplicates": counts.duplicates,
        "skipped": counts.skipped,
        "oldest_sent_at": iso_datetime(counts.oldest),
        "newest_sent_at": iso_datetime(counts.newest),
        "chunks": [
            {key: part.get(key) for key in ("phase", "chunk_order", "progress")}
            for part in progress
        ],
    }
