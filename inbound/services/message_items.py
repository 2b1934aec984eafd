"""What every message item of a webhook shares, whichever field brought it (`messages`,
`smb_message_echoes`, `history`): who the other party is, what the chat's metadata keeps,
WhatsApp's own time, its media, and the edits and revokes that change a recorded message.

A sender is its phone number, or, for a user whose number WhatsApp withholds, its
business-scoped user id (contacts.services). Everything WhatsApp sent is kept in the
chat's metadata, less the ids that have their own columns.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from accounts.models import Organization
from business_numbers.models import Number, numbers_of
from contacts.models import Contact
from contacts.services import contact_for_whatsapp_user
from events.models import Event
from inbound.media import fetch_media
from inbound.services.media import INBOUND_KINDS, MEDIA_ID, clean
from inbound.services.webhook_items import WebhookSummary, as_dict, as_list, parse_timestamp
from messaging_project.core.interactive import flow_response
from messaging_project.core.phones import normalize_phone
from messaging_project.core.storable import is_storable_json, without_unstorable
from messaging_project.worker.turns import enqueue_in_turn
from sending.models import Chat, ChatMedia, ChatType
from sending.services.events import emit_changed_chat

logger = logging.getLogger(__name__)

# WhatsApp's business-scoped user id: `CC.` and up to 128 characters (`US.ENT.` for a parent).
USER_ID_MAX = 160
# Kept in their own columns (or the contact), not in the chat's metadata.
IDENTITY_KEYS = (
    "from",
    "id",
    "timestamp",
    "from_user_id",
    "from_logical_id",
    # the user a Business app echo was sent to
    "to",
    "to_user_id",
    "to_parent_user_id",
)
# Message types whose text is matched against the canned replies.
REPLY_TYPES = ("button_reply", "list_reply")


def number_for(organization: Organization, value: dict) -> Number | None:
    """The organization's number a change is for (its `metadata.phone_number_id`), or None
    for a number that is not the organization's (several numbers can share one Meta app;
    a deleted number is no longer the organization's). A change that names no number is
    the default number's, and so is every change of an organization whose numbers have
    no phone number id (the sandbox)."""
    named = as_dict(value.get("metadata")).get("phone_number_id")
    numbers = numbers_of(organization)
    if named is not None:
        for number in numbers:
            if number.phone_number_id and number.phone_number_id == str(named):
                return number
        if any(number.phone_number_id for number in numbers):
            return None
    return Number.objects.default_for(organization)


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
    """The `contacts[]` entry that describes the item's user: the one with its number or
    user id; else a lone entry, unless it names another user (it is then someone else's
    profile, whose user id must not become this user's)."""
    for contact in contacts:
        if "from" in item and str(contact.get("wa_id")) == str(item["from"]):
            return contact
        if item.get("from_user_id") and contact.get("user_id") == item["from_user_id"]:
            return contact
    if len(contacts) != 1:
        return {}
    lone = contacts[0]
    if "from" in item and lone.get("wa_id") not in (None, ""):
        return {}  # another number's entry
    if item.get("from_user_id") and lone.get("user_id") not in (None, ""):
        return {}  # another user id's entry
    return lone


def contact_of(
    organization: Organization, sender: Sender, *, caller_retries: bool = False
) -> Contact:
    # The profile name is only the contact's first name: cleaned, it never costs the message.
    return contact_for_whatsapp_user(
        organization=organization,
        phone=sender.phone,
        user_id=sender.user_id,
        profile_name=sender.name,
        caller_retries=caller_retries,
    )


def message_metadata(item: dict) -> tuple[dict, str | None]:
    """The chat metadata of an inbound message, and the text to match, if any.

    Everything WhatsApp sent is kept (the content under the type's key, `context`,
    `referral`, `errors`, ...); text, button and list replies also get `text.body`,
    the words the customer sent or tapped, and a tap its `choice` (tapped_choice). The
    text matched against the canned replies is those words, or a template quick-reply
    button's payload."""
    kind = item.get("type")
    kind = kind if isinstance(kind, str) and kind else "unknown"
    metadata: dict[str, Any] = {"type": kind}
    metadata.update({key: value for key, value in item.items() if key not in IDENTITY_KEYS})
    metadata["type"] = kind
    text = matchable_text(kind, item)
    if text is not None:
        metadata["text"] = {**as_dict(item.get("text")), "body": text}
    choice = tapped_choice(kind, item)
    if choice is not None:
        metadata["choice"] = choice
        if kind == "button" and choice.get("id"):
            text = choice["id"]  # a template's quick-reply button is matched by its payload
    return metadata, text


def tapped_choice(kind: str, item: dict) -> dict[str, Any] | None:
    """What the customer tapped, in one shape whatever WhatsApp sent: a reply button or
    list row (`type` button_reply or list_reply, its `id` and `title`, a row's
    `description`), a template's quick-reply button (`type` button, its `payload` as
    `id` too, and its text as `title`), or a Flow's answer (`type` nfm_reply, its
    `response_json` parsed into `response`). None for anything else."""
    if kind == "button":
        button = as_dict(item.get("button"))
        payload, title = button.get("payload"), button.get("text")
        return {
            "type": "button",
            "id": payload if isinstance(payload, str) else None,
            "payload": payload if isinstance(payload, str) else None,
            "title": title if isinstance(title, str) else None,
        }
    if kind != "interactive":
        return None
    interactive = as_dict(item.get("interactive"))
    reply_type = interactive.get("type")
    reply = as_dict(interactive.get(reply_type)) if isinstance(reply_type, str) else {}
    if reply_type in REPLY_TYPES:
        choice = {
            "type": reply_type,
            "id": text_or_none(reply.get("id")),
            "title": text_or_none(reply.get("title")),
        }
        if reply_type == "list_reply" and "description" in reply:
            choice["description"] = text_or_none(reply.get("description"))
        return choice
    if reply_type == "nfm_reply":
        return {
            "type": "nfm_reply",
            "name": text_or_none(reply.get("name")),
            "title": text_or_none(reply.get("body")),
            "response": flow_response(reply.get("response_json")),
        }
    return None


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


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


def whatsapp_time(item: dict) -> datetime | None:
    """The time WhatsApp stamped a message (`timestamp`, unix seconds), kept as the chat's
    `sent_at`; None when it has none that reads as one (the message is kept all the same)."""
    try:
        return parse_timestamp(item["timestamp"])
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        return None


def change_original(
    organization: Organization,
    item: dict,
    wam_id: str,
    summary: WebhookSummary,
    chat_type: str = ChatType.INBOUND,
) -> bool:
    """Apply an edit or a deletion to the message it names: a customer's (inbound), or the
    business's own from the WhatsApp Business app (outbound, its echoes). False when that
    message is not ours to change (never recorded): the edit is then recorded as a message
    itself. The change is a message.updated or message.deleted event, once."""
    kind = item["type"]
    change = as_dict(item.get(kind))
    original = (
        Chat.objects.select_for_update()
        .filter(
            organization=organization,
            wam_id=change.get("original_message_id"),
            type=chat_type,
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
    event = Event.MESSAGE_UPDATED if kind == "edit" else Event.MESSAGE_DELETED
    emit_changed_chat(event, original.pk, organization.pk)
    return True


def media_id_of(item: dict[str, Any]) -> str | None:
    """The usable media id of a media message, if it has one."""
    content = item.get(str(item.get("type", "")))
    media_id = content.get("id") if isinstance(content, dict) else None
    if str(item.get("type", "")) in INBOUND_KINDS and isinstance(media_id, str):
        return media_id if MEDIA_ID.fullmatch(media_id) else None
    return None


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
    enqueue_in_turn(fetch_media, chat.organization_id, media.pk)
    return media
