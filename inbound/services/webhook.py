"""What the channel tells us: status updates and inbound messages.

`process_webhook` walks every `entry[]` and every `changes[]` of a Cloud API webhook.
A change for another phone number (several numbers can share one Meta app) is not
ours: it is counted (`other_number`) and left alone, never recorded here nor answered
from this organization's number. A piece with an unexpected shape is skipped (and
logged), never a failure of the whole delivery. Every write is idempotent, so a webhook
delivered twice changes nothing the second time:

- a status event is stored once (a unique constraint), and a chat's status only
  moves forward (sending/services/statuses.py); a status for a message we have not recorded yet
  is kept aside and applied when its chat is recorded;
- an inbound message is recorded once (the unique constraint on the channel's
  message id), and only its first recording can trigger an auto-reply.

Every message is recorded, whatever its type, known or not: the chat's metadata is the
message as WhatsApp sent it (content, `context`, `referral`, `errors`...), less the
sender and id that have their own columns (inbound/services/message_items.py, shared
with the Business app's echoes and history, inbound/services/customers.py). A sender
is its phone number, or, for a user whose number WhatsApp withholds, its business-scoped
user id (contacts.services). Edits and deletions change the message they name (with a
message.updated or message.deleted event); a user's new number moves their
contact (docs/webhooks.md lists every type and what is kept).

Every item is checked before the database sees it (messaging_project/core/storable.py),
so that PostgreSQL and SQLite treat it alike: an item whose identity (message id,
sender, status id) or content cannot be stored is skipped; a secondary field that
cannot be stored (a profile name, a failure's title or error object) is cleaned or
dropped and the item kept. A database error that is not about the item (the database
went away) is not a skip: it fails the delivery, which WhatsApp then retries.

An auto-reply talks to the network, so it is a task (inbound/auto_replies.py): the message is
matched against the canned replies here, and the task, carrying the reply as matched,
is written with the inbound chat, in the webhook's transaction (its first run writes
the AutoReply). A crash after the commit delays
the reply until a worker runs it; it cannot lose it. The webhook answers at once
however slow the channel is. See docs/webhooks.md.
"""

import logging
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import Organization
from business_numbers.models import Number
from canned_replies.matching import find_reply
from contacts.models import Contact
from contacts.opt_outs import apply_opt_out_words
from contacts.services import move_whatsapp_user
from events.models import Event
from inbound.auto_replies import send_auto_reply
from inbound.services.account_news import NO_FIELD, log_unhandled, record_account_news
from inbound.services.customers import record_echoes
from inbound.services.message_items import (
    USER_ID_MAX,
    attach_media,
    change_original,
    contact_of,
    message_metadata,
    number_for,
    sender_of,
    whatsapp_time,
)
from inbound.services.statuses import record_statuses
from inbound.services.webhook_items import (
    WebhookSummary,
    as_dict,
    as_list,
    guarded,
    message_id,
)
from messaging_project.core.metrics import INBOUND_MESSAGES
from messaging_project.core.phones import normalize_phone
from messaging_project.core.storable import is_storable_json
from messaging_project.worker.turns import enqueue_in_turn
from sending.models import Chat, ChatSource, ChatStatus, ChatType
from sending.services import insert_chat
from sending.services.events import emit_chat, whatsapp_change

logger = logging.getLogger(__name__)


def process_webhook(
    *, organization: Organization, payload: dict[str, Any], queue_statuses: bool = False
) -> WebhookSummary:
    """`queue_statuses`: leave the statuses to the worker (inbound/queued_statuses.py):
    the changes that carry them are returned in the summary, for the caller to queue."""
    summary = WebhookSummary()
    status_items: list[tuple[dict, dict]] = []  # each status, and its change's value
    for entry in as_list(payload.get("entry")):
        account_id, entry_time = as_dict(entry).get("id"), as_dict(entry).get("time")
        for change in as_list(as_dict(entry).get("changes")):
            change = as_dict(change)
            value = as_dict(change.get("value"))
            # A change that names no field is not read as anything: it is logged for the
            # staff as unhandled (Meta's docs show changes with `field` misplaced).
            field = change.get("field", NO_FIELD)
            if field == "messages" and not value:
                summary.skipped += 1
                continue
            if field != "messages":
                record_account_news(
                    organization,
                    field,
                    value,
                    summary,
                    account_id=account_id,
                    entry_time=entry_time,
                )
                continue
            number = number_for(organization, value)
            if number is None:
                summary.other_number += 1
                logger.info("Webhook change for another number, organization %s", organization.pk)
                continue
            senders = [as_dict(c) for c in as_list(value.get("contacts"))]
            calls = as_list(value.get("calls"))
            if calls:  # calls are not handled: kept for the staff, as a `calls` change is
                summary.skipped += len(calls)
                guarded(log_unhandled, organization, value, summary, "calls")
            statuses = [(as_dict(item), value) for item in as_list(value.get("statuses"))]
            # Kept as sent, so whole: a change a database cannot store is read here,
            # item by item (each status checked, as with the queue off).
            if statuses and queue_statuses and is_storable_json(value):
                summary.queued_changes.append(value)
                summary.queued += len(statuses)
            else:
                status_items += statuses
            for message in as_list(value.get("messages")):
                message = with_change_errors(as_dict(message), value)
                record_new_message(organization, message, summary, senders, value, number)
            if "message_echoes" in value:  # sent from the WhatsApp Business app
                record_echoes(organization, value, summary, number)
    record_statuses(organization, status_items, summary)
    if summary.messages:
        # Counted here, whichever path brought them (the webhook, simulate_inbound), once
        # they are committed.
        transaction.on_commit(partial(INBOUND_MESSAGES.inc, summary.messages))
    return summary


def with_change_errors(message: dict, value: dict) -> dict:
    """A message WhatsApp could not describe comes with the change's `errors` (an
    interactive message with no body): they belong to the message."""
    if "errors" not in message and value.get("errors") is not None:
        return {**message, "errors": value["errors"]}
    return message


def record_new_message(
    organization: Organization,
    message: dict,
    summary: WebhookSummary,
    senders: list[dict],
    value: dict | None = None,
    number: Number | None = None,
) -> None:
    """One inbound message (to `number`, the default when not given) in the savepoint
    guarded() gives it. A message recorded before (WhatsApp delivers again when it
    missed our 200) meets the unique message id: the savepoint is rolled back, with
    anything the message did before, and it counts as a duplicate. A new sender's
    contact created meanwhile by a concurrent delivery meets the contacts' unique
    index: rolled back the same way, the message is recorded again and finds it. (One
    savepoint a message, rather than more around the inserts.)"""
    for attempt in range(2):
        try:
            guarded(record_message, organization, message, summary, senders, value, number)
            return
        except IntegrityError:
            recorded = Chat.objects.filter(organization=organization, wam_id=message_id(message))
            if recorded.exists():
                summary.duplicates += 1
                return
            if attempt:
                raise


# Messages ------------------------------------------------------------------------------


def record_message(
    organization: Organization,
    item: dict,
    summary: WebhookSummary,
    contacts: list[dict],
    value: dict | None = None,
    number: Number | None = None,
) -> None:
    """`value`: the WhatsApp change's value the message came in (for the original
    product's message.received body, events/formats.py); `number`: the organization's
    number it came to (the default when not given)."""
    wam_id = message_id(item)
    kind = item.get("type")
    if kind in ("edit", "revoke") and change_original(organization, item, wam_id, summary):
        return
    if kind == "system":
        contact = system_contact(organization, item, contacts)
    else:
        contact = contact_of(organization, sender_of(item, contacts), caller_retries=True)
    metadata, text = message_metadata(item)
    if not is_storable_json(metadata):
        raise ValueError(f"message {wam_id} holds what a database cannot store")
    # The same message delivered again is an IntegrityError here (record_new_message).
    chat = insert_chat(
        Chat(
            organization=organization,
            number=number or Number.objects.default_for(organization),
            contact=contact,
            wam_id=wam_id,
            type=ChatType.INBOUND,
            status=ChatStatus.RECEIVED,
            source=ChatSource.CUSTOMER,
            sent_at=whatsapp_time(item),
            metadata=metadata,
        )
    )
    summary.messages += 1
    attach_media(chat, item)  # an image, voice note...: its download is a task
    # Events (sending/services/events.py), media pending.
    emit_chat(Event.MESSAGE_RECEIVED, chat, change=lambda: whatsapp_change(value, messages=[item]))
    if text is not None:
        # STOP / START (docs/campaigns.md)
        apply_opt_out_words(organization=organization, contact=contact, text=text)
        schedule_auto_reply(chat, text, summary, tapped=(metadata.get("choice") or {}).get("id"))


def system_contact(organization: Organization, item: dict, contacts: list[dict]) -> Contact:
    """The contact a system message is about. A user's new number or new user id moves
    their contact to it, so their next message finds it."""
    system = as_dict(item.get("system"))
    kind = system.get("type")
    if kind == "user_changed_number" and system.get("wa_id"):
        return move_whatsapp_user(
            organization=organization,
            old_phone=normalize_phone(str(item["from"])),
            new_phone=normalize_phone(str(system["wa_id"])),
        )
    if kind == "user_changed_user_id" and system.get("user_id"):
        new_user_id = str(system["user_id"])
        if len(new_user_id) > USER_ID_MAX:
            raise ValueError("unusable user id")
        return move_whatsapp_user(
            organization=organization,
            old_user_id=str(system.get("previous_user_id") or ""),
            new_user_id=new_user_id,
        )
    return contact_of(organization, sender_of(item, contacts))


def schedule_auto_reply(
    chat: Chat, text: str, summary: WebhookSummary, tapped: str | None = None
) -> None:
    """Owe the sender the matching canned reply, if one matches (`tapped`: the id of the
    button or row they tapped, for the `button` replies): the task that sends it,
    carrying the reply as matched now, in the caller's transaction. Its first run writes
    the AutoReply (inbound/auto_replies.py): one INSERT less in every such webhook."""
    reply = find_reply(organization=chat.organization, text=text, tapped=tapped)
    if reply is None:
        return
    owed = {
        "inbound": chat.pk,
        "canned_reply": reply.pk,
        "message": reply.response_text,
        "media_type": reply.send_type,
    }
    summary.replies.append(enqueue_in_turn(send_auto_reply, chat.organization_id, owed=owed).id)
