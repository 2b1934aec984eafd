"""What the channel tells us: status updates and inbound messages.

`process_webhook` walks every `entry[]` and every `changes[]` of a Cloud API webhook.
A piece with an unexpected shape is skipped (and logged), never a failure of the
whole delivery. Every write is idempotent, so a webhook delivered twice changes
nothing the second time:

- a status event is stored once (a unique constraint), and a chat's status only
  moves forward (accepted < sent < delivered < read); `failed` wins whenever it comes;
- an inbound message is recorded once (the unique constraint on the channel's
  message id), and only its first recording can trigger an auto-reply.

Every item is checked before the database sees it (messaging_project/api/storable.py),
so that PostgreSQL and SQLite treat it alike: an item whose identity (message id,
sender, status id) or content cannot be stored is skipped; a secondary field that
cannot be stored (a profile name, a failure's title or error object) is cleaned or
dropped and the item kept. A database error that is not about the item (the database
went away) is not a skip: it fails the delivery, which WhatsApp then retries.

An auto-reply talks to the network, so it is a task (sending/tasks.py): the message is
matched against the canned replies here, and the AutoReply and its task are written
with the inbound chat, in the webhook's transaction. A crash after the commit delays
the reply until a worker runs it; it cannot lose it. The webhook answers at once
however slow the channel is. See docs/webhooks.md.
"""

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import Organization
from canned_replies.matching import find_reply
from contacts.services import contact_for_phone
from events.models import Event
from messaging_project.api.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.api.storable import is_storable_json, without_unstorable
from sending.events import emit_chat, emit_status_updates, move_forward, status_listeners
from sending.gateway.cloud_api import is_message_id
from sending.models import AutoReply, Chat, ChatStatus, ChatStatusEvent, ChatType
from sending.tasks import send_auto_reply

logger = logging.getLogger(__name__)

# Forward order of an outbound message's status; anything else never moves it.
STATUS_RANK = {
    ChatStatus.ACCEPTED: 0,
    ChatStatus.HELD_FOR_QUALITY_ASSESSMENT: 0,
    ChatStatus.PAUSED: 0,
    ChatStatus.SENT: 1,
    ChatStatus.DELIVERED: 2,
    ChatStatus.READ: 3,
}
WEBHOOK_STATUSES = {ChatStatus.SENT, ChatStatus.DELIVERED, ChatStatus.READ, ChatStatus.FAILED}


@dataclass
class WebhookSummary:
    statuses: int = 0
    messages: int = 0
    duplicates: int = 0
    skipped: int = 0
    replies: list[str] = field(default_factory=list)  # the auto-reply tasks enqueued (ids)


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def message_id(item: dict) -> str:
    """The item's WhatsApp message id, if it is one we can store and look up."""
    wam_id = item["id"]
    if not is_message_id(wam_id):
        shown = wam_id[:40] if isinstance(wam_id, str) else type(wam_id).__name__
        raise ValueError(f"unusable message id {shown!r}")
    return wam_id


def process_webhook(*, organization: Organization, payload: dict[str, Any]) -> WebhookSummary:
    summary = WebhookSummary()
    status_items: list[dict] = []
    for entry in as_list(payload.get("entry")):
        for change in as_list(as_dict(entry).get("changes")):
            change = as_dict(change)
            value = as_dict(change.get("value"))
            if change.get("field", "messages") != "messages" or not value:
                summary.skipped += 1
                continue
            profiles = {
                str(c.get("wa_id")): as_dict(c.get("profile")).get("name")
                for c in map(as_dict, as_list(value.get("contacts")))
            }
            status_items += map(as_dict, as_list(value.get("statuses")))
            for message in as_list(value.get("messages")):
                guarded(record_message, organization, as_dict(message), summary, profiles)
    record_statuses(organization, status_items, summary)
    return summary


def guarded(handler, organization, item, summary, *args) -> None:
    """One malformed item is skipped and logged; the rest of the delivery goes on."""
    try:
        with transaction.atomic():
            handler(organization, item, summary, *args)
    except (KeyError, TypeError, ValueError, InvalidPhoneNumber) as error:
        skip(organization, summary, error)


def skip(organization: Organization, summary: WebhookSummary, error: Exception) -> None:
    summary.skipped += 1
    logger.warning("Skipped a webhook item of organization %s: %r", organization.pk, error)


@dataclass(frozen=True)
class StatusUpdate:
    wam_id: str
    status: str
    timestamp: datetime
    error_code: int | None = None
    error_title: str = ""
    error_details: dict | None = None

    @property
    def key(self) -> tuple[str, str, datetime]:
        return (self.wam_id, self.status, self.timestamp)


def parse_status(item: dict) -> StatusUpdate:
    wam_id, status = message_id(item), str(item["status"])
    if status not in WEBHOOK_STATUSES:
        raise ValueError(f"unknown status {status!r}")
    timestamp = datetime.fromtimestamp(int(str(item["timestamp"])), tz=UTC)
    errors = as_list(item.get("errors"))
    return StatusUpdate(
        wam_id, status, timestamp, **failure_columns(as_dict(errors[0]) if errors else {})
    )


def failure_columns(error: dict) -> dict[str, Any]:
    """The columns of Graph's error on a failed status. The failure is what counts, so a
    title a database cannot store is cleaned and such an error object is dropped."""
    code = error.get("code")
    title = str(error.get("title") or error.get("message") or "")
    return {
        # Graph's codes are small; anything else would not fit the column.
        "error_code": code if isinstance(code, int) and 0 <= code < 2**31 else None,
        "error_title": without_unstorable(title)[:255],
        "error_details": error if error and is_storable_json(error) else None,
    }


def record_statuses(organization: Organization, items: list[dict], summary: WebhookSummary) -> None:
    """Store a delivery's status events and move their chats forward, in a few queries
    whatever the number of events (a busy number sends hundreds per delivery)."""
    updates: list[StatusUpdate] = []
    for item in items:
        try:
            updates.append(parse_status(item))
        except (KeyError, TypeError, ValueError, OverflowError, OSError) as error:
            skip(organization, summary, error)
    if not updates:
        return
    wam_ids = {update.wam_id for update in updates}
    chats = {
        chat.wam_id: chat
        for chat in Chat.objects.filter(organization=organization, wam_id__in=wam_ids)
    }
    seen = set(
        ChatStatusEvent.objects.filter(organization=organization, wam_id__in=wam_ids).values_list(
            "wam_id", "status", "timestamp"
        )
    )
    new: list[StatusUpdate] = []
    for update in updates:
        if update.key in seen:
            summary.duplicates += 1
            continue
        seen.add(update.key)
        new.append(update)
    # ignore_conflicts: a concurrent delivery of the same events may have stored them
    # since we looked; the unique constraint keeps each event once.
    ChatStatusEvent.objects.bulk_create(
        [
            ChatStatusEvent(
                organization=organization,
                chat=chats.get(update.wam_id),  # None: kept aside, not an error
                wam_id=update.wam_id,
                status=update.status,
                timestamp=update.timestamp,
                error_code=update.error_code,
                error_title=update.error_title,
                error_details=update.error_details,
            )
            for update in new
        ],
        ignore_conflicts=True,
    )
    summary.statuses += len(new)
    advance_statuses([update for update in new if update.wam_id in chats], chats)


def advance_statuses(updates: list[StatusUpdate], chats: dict[str, Chat]) -> None:
    """Move each chat forward only, with conditional updates so that concurrent
    deliveries cannot move a chat backwards either. `failed` is final and keeps its error.
    Each chat that moved is a message.status.update event (sending/events.py)."""
    listeners = status_listeners(chats[update.wam_id] for update in updates)  # events
    moved: list[int] = []  # events
    highest: dict[int, str] = {}
    for update in updates:
        chat = chats[update.wam_id]
        if update.status == ChatStatus.FAILED:
            Chat.objects.filter(pk=chat.pk).update(
                status=ChatStatus.FAILED,
                error_code=update.error_code,
                error_title=update.error_title,
                error_details=update.error_details,
            )
            moved.append(chat.pk)  # events
            highest[chat.pk] = ChatStatus.FAILED
        elif highest.get(chat.pk) != ChatStatus.FAILED:
            current = highest.get(chat.pk)
            if current is None or STATUS_RANK[update.status] > STATUS_RANK[current]:
                highest[chat.pk] = update.status
    for status in (ChatStatus.SENT, ChatStatus.DELIVERED, ChatStatus.READ):
        ids = [pk for pk, target in highest.items() if target == status]
        if ids:
            lower = [name for name, rank in STATUS_RANK.items() if rank < STATUS_RANK[status]]
            moving = Chat.objects.filter(pk__in=ids, status__in=lower)
            moved += move_forward(moving, status, watched=bool(listeners))  # events
    emit_status_updates(moved, listeners)  # events


def message_metadata(item: dict) -> tuple[dict, str | None]:
    """The chat metadata of an inbound message, and the text to match, if any."""
    kind = str(item.get("type", ""))
    if kind == "text":
        body = str(as_dict(item.get("text"))["body"])
        return {"type": "text", "text": {"body": body}}, body
    if kind == "interactive":
        interactive = as_dict(item.get("interactive"))
        reply = as_dict(interactive.get("button_reply") or interactive.get("list_reply"))
        title = str(reply["title"])
        return {"type": "interactive", "text": {"body": title}, "interactive": interactive}, title
    if kind == "button":  # a template's quick-reply button
        text = str(as_dict(item.get("button"))["text"])
        return {"type": "button", "text": {"body": text}, "button": item.get("button")}, text
    # Media, locations, reactions...: recorded as they came, not matched.
    return {"type": kind or "unknown", kind or "unknown": item.get(kind)}, None


def record_message(
    organization: Organization, item: dict, summary: WebhookSummary, profiles: dict
) -> None:
    wam_id, sender = message_id(item), str(item["from"])
    metadata, text = message_metadata(item)
    if not is_storable_json(metadata):
        raise ValueError(f"message {wam_id} holds what a database cannot store")
    contact = contact_for_phone(organization=organization, phone=normalize_phone(sender))
    # The profile name is only the contact's first name: cleaned, it never costs the message.
    name = profiles.get(sender)
    name = without_unstorable(name).strip()[:255] if isinstance(name, str) else ""
    if contact.first_name is None and name:
        contact.first_name = name
        contact.save(update_fields=["first_name", "updated_at"])
    try:
        with transaction.atomic():
            chat = Chat.objects.create(
                organization=organization,
                contact=contact,
                wam_id=wam_id,
                type=ChatType.INBOUND,
                status=ChatStatus.RECEIVED,
                metadata=metadata,
            )
    except IntegrityError:  # the same message, delivered again
        summary.duplicates += 1
        return
    summary.messages += 1
    emit_chat(Event.MESSAGE_RECEIVED, chat)  # events (sending/events.py)
    if text is not None:
        schedule_auto_reply(chat, text, summary)


def schedule_auto_reply(chat: Chat, text: str, summary: WebhookSummary) -> None:
    """Owe the sender the matching canned reply, if one matches: the AutoReply and the
    task that sends it, in the caller's transaction."""
    reply = find_reply(organization=chat.organization, text=text)
    if reply is None:
        return
    auto_reply = AutoReply.objects.create(
        organization=chat.organization,
        inbound=chat,
        canned_reply=reply,
        message=reply.response_text,
    )
    summary.replies.append(send_auto_reply.enqueue(auto_reply.pk).id)
