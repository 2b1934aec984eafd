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
sender and id that have their own columns. A sender is its phone number, or, for a user
whose number WhatsApp withholds, its business-scoped user id (contacts.services).
Edits and deletions change the message they name; a user's new number moves their
contact (docs/webhooks.md lists every type and what is kept).

Every item is checked before the database sees it (messaging_project/core/storable.py),
so that PostgreSQL and SQLite treat it alike: an item whose identity (message id,
sender, status id) or content cannot be stored is skipped; a secondary field that
cannot be stored (a profile name, a failure's title or error object) is cleaned or
dropped and the item kept. A database error that is not about the item (the database
went away) is not a skip: it fails the delivery, which WhatsApp then retries.

An auto-reply talks to the network, so it is a task (sending/tasks.py): the message is
matched against the canned replies here, and the task, carrying the reply as matched,
is written with the inbound chat, in the webhook's transaction (its first run writes
the AutoReply). A crash after the commit delays
the reply until a worker runs it; it cannot lose it. The webhook answers at once
however slow the channel is. See docs/webhooks.md.
"""

import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import Organization
from canned_replies.matching import find_reply
from contacts.models import Contact
from contacts.opt_outs import apply_opt_out_words
from contacts.services import contact_for_whatsapp_user, move_whatsapp_user
from events.models import Event
from messaging_project.core.metrics import INBOUND_MESSAGES
from messaging_project.core.phones import normalize_phone
from messaging_project.core.storable import is_storable_json, without_unstorable
from sending.models import Channel, Chat, ChatMedia, ChatStatus, ChatType
from sending.services.account_news import record_account_news
from sending.services.events import emit_chat, whatsapp_change
from sending.services.media import INBOUND_KINDS, MEDIA_ID, clean
from sending.services.statuses import record_statuses
from sending.services.webhook_items import (
    WebhookSummary,
    as_dict,
    as_list,
    guarded,
    message_id,
)
from sending.tasks import fetch_media, send_auto_reply

logger = logging.getLogger(__name__)

# WhatsApp's business-scoped user id: `CC.` and up to 128 characters (`US.ENT.` for a parent).
USER_ID_MAX = 160
# Kept in their own columns (or the contact), not in the chat's metadata.
IDENTITY_KEYS = ("from", "id", "timestamp", "from_user_id", "from_logical_id")
# Message types whose text is matched against the canned replies.
REPLY_TYPES = ("button_reply", "list_reply")


def process_webhook(*, organization: Organization, payload: dict[str, Any]) -> WebhookSummary:
    summary = WebhookSummary()
    own_number = Channel.of(organization).phone_number_id
    status_items: list[tuple[dict, dict]] = []  # each status, and its change's value
    for entry in as_list(payload.get("entry")):
        for change in as_list(as_dict(entry).get("changes")):
            change = as_dict(change)
            value = as_dict(change.get("value"))
            field = change.get("field", "messages")
            if not value:
                summary.skipped += 1
                continue
            if field != "messages":
                record_account_news(organization, field, value, summary)
                continue
            if not for_number(value, own_number):
                summary.other_number += 1
                logger.info("Webhook change for another number, organization %s", organization.pk)
                continue
            senders = [as_dict(c) for c in as_list(value.get("contacts"))]
            status_items += ((as_dict(item), value) for item in as_list(value.get("statuses")))
            for message in as_list(value.get("messages")):
                message = with_change_errors(as_dict(message), value)
                record_new_message(organization, message, summary, senders, value)
    record_statuses(organization, status_items, summary)
    if summary.messages:
        # Counted here, whichever path brought them (the webhook, simulate_inbound), once
        # they are committed.
        transaction.on_commit(partial(INBOUND_MESSAGES.inc, summary.messages))
    return summary


def for_number(value: dict, own_number: str) -> bool:
    """Whether a change is for the organization's number. An organization without a
    number (the sandbox) takes every change; a change that names no number is taken."""
    named = as_dict(value.get("metadata")).get("phone_number_id")
    return not own_number or named is None or str(named) == own_number


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
) -> None:
    """One inbound message in the savepoint guarded() gives it. A message recorded before
    (WhatsApp delivers again when it missed our 200) meets the unique message id: the
    savepoint is rolled back, with anything the message did before, and it counts as a
    duplicate. (One savepoint a message, rather than one more around the insert.)"""
    try:
        guarded(record_message, organization, message, summary, senders, value)
    except IntegrityError:
        recorded = Chat.objects.filter(organization=organization, wam_id=message_id(message))
        if not recorded.exists():
            raise
        summary.duplicates += 1


# Senders -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sender:
    phone: str  # digits, or "" when WhatsApp withholds the number
    user_id: str  # the business-scoped user id, or ""
    name: str  # the profile name, cleaned; "" when none


def sender_of(item: dict, contacts: list[dict]) -> Sender:
    """Who sent a message: its `from` number and/or its business-scoped user id, with the
    profile of the `contacts[]` entry that describes them."""
    raw_phone = item.get("from")
    phone = normalize_phone(str(raw_phone)) if raw_phone not in (None, "") else ""
    profile = matching_contact(item, contacts)
    user_id = item.get("from_user_id") or profile.get("user_id") or ""
    user_id = user_id if isinstance(user_id, str) else ""
    if user_id and (len(user_id) > USER_ID_MAX or not is_storable_json(user_id)):
        raise ValueError("unusable user id")
    if not phone and not user_id:
        raise KeyError("from")
    name = as_dict(profile.get("profile")).get("name")
    name = without_unstorable(name).strip()[:255] if isinstance(name, str) else ""
    return Sender(phone=phone, user_id=user_id.strip(), name=name)


def matching_contact(item: dict, contacts: list[dict]) -> dict:
    for contact in contacts:
        if "from" in item and str(contact.get("wa_id")) == str(item["from"]):
            return contact
        if item.get("from_user_id") and contact.get("user_id") == item["from_user_id"]:
            return contact
    return contacts[0] if len(contacts) == 1 else {}


def contact_of(organization: Organization, sender: Sender) -> Contact:
    # The profile name is only the contact's first name: cleaned, it never costs the message.
    return contact_for_whatsapp_user(
        organization=organization,
        phone=sender.phone,
        user_id=sender.user_id,
        profile_name=sender.name,
    )


# Messages ------------------------------------------------------------------------------


def message_metadata(item: dict) -> tuple[dict, str | None]:
    """The chat metadata of an inbound message, and the text to match, if any.

    Everything WhatsApp sent is kept (the content under the type's key, `context`,
    `referral`, `errors`, ...); text, button and list replies also get `text.body`,
    the text the canned replies match."""
    kind = item.get("type")
    kind = kind if isinstance(kind, str) and kind else "unknown"
    metadata = {"type": kind}
    metadata.update({key: value for key, value in item.items() if key not in IDENTITY_KEYS})
    metadata["type"] = kind
    text = matchable_text(kind, item)
    if text is not None:
        metadata["text"] = {**as_dict(item.get("text")), "body": text}
    return metadata, text


def matchable_text(kind: str, item: dict) -> str | None:
    """The user's own words, where the message has them; None for everything else
    (media, Flows replies, reactions, system messages, messages carrying only errors)."""
    if kind == "text":
        body = as_dict(item.get("text")).get("body")
        return body if isinstance(body, str) else None
    if kind == "button":  # a template's quick-reply button
        text = as_dict(item.get("button")).get("text")
        return text if isinstance(text, str) else None
    if kind == "interactive":
        interactive = as_dict(item.get("interactive"))
        reply = (
            as_dict(interactive.get(interactive.get("type")))
            if interactive.get("type") in REPLY_TYPES
            else {}
        )
        title = reply.get("title")
        return title if isinstance(title, str) else None
    return None


def record_message(
    organization: Organization,
    item: dict,
    summary: WebhookSummary,
    contacts: list[dict],
    value: dict | None = None,
) -> None:
    """`value`: the WhatsApp change's value the message came in (for the original
    product's message.received body, events/formats.py)."""
    wam_id = message_id(item)
    kind = item.get("type")
    if kind in ("edit", "revoke") and change_original(organization, item, wam_id, summary):
        return
    if kind == "system":
        contact = system_contact(organization, item, contacts)
    else:
        contact = contact_of(organization, sender_of(item, contacts))
    metadata, text = message_metadata(item)
    if not is_storable_json(metadata):
        raise ValueError(f"message {wam_id} holds what a database cannot store")
    # The same message delivered again is an IntegrityError here (record_new_message).
    chat = Chat.objects.create(
        organization=organization,
        contact=contact,
        wam_id=wam_id,
        type=ChatType.INBOUND,
        status=ChatStatus.RECEIVED,
        metadata=metadata,
    )
    summary.messages += 1
    attach_media(chat, item)  # an image, voice note...: its download is a task
    # Events (sending/services/events.py), media pending.
    emit_chat(Event.MESSAGE_RECEIVED, chat, change=lambda: whatsapp_change(value, messages=[item]))
    if text is not None:
        # STOP / START (docs/campaigns.md)
        apply_opt_out_words(organization=organization, contact=contact, text=text)
        schedule_auto_reply(chat, text, summary)


def change_original(
    organization: Organization, item: dict, wam_id: str, summary: WebhookSummary
) -> bool:
    """Apply an edit or a deletion to the inbound message it names. False when that message
    is not ours to change (never recorded): the edit is then recorded as a message itself."""
    kind = item["type"]
    change = as_dict(item.get(kind))
    original = (
        Chat.objects.select_for_update()
        .filter(
            organization=organization,
            wam_id=change.get("original_message_id"),
            type=ChatType.INBOUND,
        )
        .first()
    )
    if original is None:
        return False
    metadata = dict(original.metadata or {})
    changes = as_list(metadata.get("changes"))
    if any(as_dict(done).get("id") == wam_id for done in changes):
        summary.duplicates += 1
        return True
    done = {"id": wam_id, "type": kind, "timestamp": str(item.get("timestamp", ""))}
    if kind == "edit":
        new = as_dict(change.get("message"))
        metadata.update({key: value for key, value in new.items() if key != "type"})
        done["message"] = new
    else:
        metadata["revoked"] = True
    metadata["changes"] = [*changes, done]
    if not is_storable_json(metadata):
        raise ValueError(f"{kind} {wam_id} holds what a database cannot store")
    Chat.objects.filter(pk=original.pk).update(metadata=metadata)
    summary.messages += 1
    return True


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


def schedule_auto_reply(chat: Chat, text: str, summary: WebhookSummary) -> None:
    """Owe the sender the matching canned reply, if one matches: the task that sends it,
    carrying the reply as matched now, in the caller's transaction. Its first run writes
    the AutoReply (sending/tasks.py): one INSERT less in every such webhook."""
    reply = find_reply(organization=chat.organization, text=text)
    if reply is None:
        return
    owed = {
        "inbound": chat.pk,
        "canned_reply": reply.pk,
        "message": reply.response_text,
        "media_type": reply.media_type,
    }
    summary.replies.append(send_auto_reply.enqueue(owed=owed).id)


def attach_media(chat: Chat, item: dict[str, Any]) -> ChatMedia | None:
    """For an inbound media message: its ChatMedia and fetch task, in the caller's
    transaction. Anything else (or media without a usable id) is left as it is."""
    kind = INBOUND_KINDS.get(str(item.get("type", "")))
    content = item.get(str(item.get("type", "")))
    if kind is None or not isinstance(content, dict):
        return None
    media_id = content.get("id")
    if not (isinstance(media_id, str) and MEDIA_ID.fullmatch(media_id)):
        logger.warning("Inbound %s %s carries no usable media id", kind, chat.wam_id)
        return None
    media = ChatMedia.objects.create(
        organization_id=chat.organization_id,
        media_id=media_id,
        kind=kind,
        mime_type=clean(content.get("mime_type"), 255),
        sha256=clean(content.get("sha256"), 128),
        file_name=clean(content.get("filename"), 255),
    )
    Chat.objects.filter(pk=chat.pk).update(media=media)
    chat.media = media
    fetch_media.enqueue(media.pk)
    return media
