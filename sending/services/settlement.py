"""Sends whose outcome is unknown, settled by their status webhooks.

Every send carries `biz_opaque_callback_data` naming it (payloads.with_callback). A
status whose message id matches no chat is kept aside with that callback data
(inbound.services.statuses); when the callback data names a send whose outcome is
unknown, the status settles it:

- **Campaign recipients** (`campaign-recipient:<id>:<attempt>`): a worker that died
  after the request went out recorded no chat; a send that got no answer recorded a
  `failed` chat with no message id, under the uuid its callback data names
  (`send_chat_uuid`). Their owner (campaigns/settlement.py) asks here: for each
  callback data whose statuses came, that failed chat is settled as an API send's is
  (`settle`), else the chat is recorded from them (WhatsApp's message id, `accepted`,
  then moved forward by those statuses, with message.sent and message.status.update as
  for any send).
- **API sends and auto-replies** (`chat:<uuid>`): a send that got no answer (a timeout,
  a connection dropped mid-request) is recorded as a `failed` chat with no message id,
  under the uuid its callback data names; so is an auto-reply whose run died during
  the call (the uuid derived from the reply and its attempt, `auto_reply_chat_uuid`).
  A status naming such a chat gives it WhatsApp's message id and takes it from
  `accepted` forward, with the events a send emits (`settle_named_chats`); the
  statuses that came before the chat was recorded settle it as it is recorded
  (`settle_from_kept`). The two meet on a lock on the callback data, as statuses and
  sends meet on the message id (statuses.py), so that each sees the other's rows, and
  a conditional update (no message id yet) settles a chat once.

A send whose statuses never came stays unknown.
"""

import uuid
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from accounts.models import Organization
from business_numbers.gateway import FailureKind, GatewayError
from business_numbers.models import Number
from contacts.models import Contact
from events.models import Event
from messaging_project.core.database import Statement, fetch_together
from sending.models import (
    UNCOUNTED,
    AutoReply,
    AutoReplyState,
    Chat,
    ChatStatus,
    ChatStatusEvent,
    ChatType,
)
from sending.queries import hold_message_ids, holding
from sending.recorded import StatusesKept
from sending.services.chats import SendFailed, record_accepted, record_failure
from sending.services.events import emit_chat
from sending.services.statuses import apply_kept_statuses

CHAT_PREFIX = "chat:"
DIED_DURING_THE_CALL = (
    "The run sending this message stopped before WhatsApp answered: it may or may not "
    "have been delivered, and it is not sent again."
)
# Names an auto-reply's chat before it is recorded (a run may die during the call).
AUTO_REPLY_CHATS = uuid.UUID("6f1d2c1e-5b8a-4f0e-9a53-2a0f3e7d9c41")
# Names the failed chat of a send that carried callback data (a campaign's).
SEND_CHATS = uuid.UUID("0b9e4f7a-3c2d-4e61-8f15-7a6d2c9b4e30")


@dataclass(frozen=True)
class UnknownSend:
    """A send whose outcome is unknown: the callback data it carried, its recipient and
    what its chat keeps (as the send would have recorded it)."""

    callback_data: str
    contact: Contact
    metadata: dict[str, Any]
    number: Number


def sends_with_statuses(*, organization: Organization, callback_data: list[str]) -> dict[str, str]:
    """Of these callback data, those whose statuses were kept aside: each with WhatsApp's
    message id (one query)."""
    found: dict[str, str] = {}
    rows = (
        ChatStatusEvent.objects.filter(
            organization=organization, chat__isnull=True, callback_data__in=set(callback_data)
        )
        .order_by("timestamp", "id")
        .values_list("callback_data", "wam_id")
    )
    for data, wam_id in rows:
        found.setdefault(data, wam_id)
    return found


def send_chat_uuid(organization_id: int, callback_data: str) -> uuid.UUID:
    """The uuid of the failed chat a send carrying this callback data records (a
    campaign's), so that the status settling the send finds that chat rather than
    recording a second one (chat uuids are tenancy-checked, not secrets)."""
    return uuid.uuid5(SEND_CHATS, f"{organization_id}:{callback_data}")


def settle_unknown_sends(
    *, organization: Organization, sends: list[UnknownSend]
) -> dict[str, Chat]:
    """The chats of the sends whose statuses came, by callback data: the failed chat the
    send recorded (`send_chat_uuid`) given WhatsApp's message id, else one recorded from
    the statuses; the others are left out (still unknown). Idempotent: a message id
    already recorded is not recorded again (that send is left out)."""
    if not sends:
        return {}
    wam_ids = sends_with_statuses(
        organization=organization, callback_data=[send.callback_data for send in sends]
    )
    if not wam_ids:
        return {}
    recorded = {
        wam_id
        for wam_id in Chat.objects.filter(
            organization=organization, wam_id__in=wam_ids.values()
        ).values_list("wam_id", flat=True)
        if wam_id is not None  # found by it: never None
    }
    settled = settle_failed_chats(organization, wam_ids, recorded)
    chats: dict[str, Chat] = {}
    for send in sends:
        wam_id = wam_ids.get(send.callback_data)
        if send.callback_data in settled:
            continue
        if wam_id is None or wam_id in recorded or send.callback_data in chats:
            continue
        recorded.add(wam_id)
        chats[send.callback_data] = Chat(
            organization=organization,
            number=send.number,
            contact=send.contact,
            type=ChatType.OUTBOUND,
            wam_id=wam_id,
            metadata=send.metadata,
            status=ChatStatus.ACCEPTED,
        )
    outcomes = record_accepted(list(chats.values()))  # takes the kept statuses too
    return settled | {
        data: outcome
        for data, outcome in zip(chats, outcomes, strict=True)
        if not isinstance(outcome, SendFailed)
    }


def settle_failed_chats(
    organization: Organization, wam_ids: dict[str, str], recorded: set[str]
) -> dict[str, Chat]:
    """The failed chats recorded under these callback data's uuids (sends that got no
    answer), each given the message id its statuses carry (`settle`: once, while it has
    none), or found settled with it already; by callback data. One query when there is
    none. Adds the message ids it settles to `recorded`."""
    named = {send_chat_uuid(organization.pk, data): data for data in wam_ids}
    found = Chat.objects.filter(
        organization=organization, uuid__in=named, type=ChatType.OUTBOUND
    ).select_related("contact", "number")
    settled: dict[str, Chat] = {}
    for chat in found:
        data = named[chat.uuid]
        wam_id = wam_ids[data]
        if is_unknown(chat) and wam_id not in recorded:
            settle(chat, wam_id)
            if chat.wam_id == wam_id:
                recorded.add(wam_id)
        if chat.wam_id == wam_id:
            settled[data] = chat
    return settled


# API sends and auto-replies: `chat:<uuid>` ---------------------------------------------


def chat_callback(chat_uuid: uuid.UUID) -> str:
    """What a send's message carries: the uuid of the chat it records."""
    return f"{CHAT_PREFIX}{chat_uuid}"


def named_chat(data: str) -> uuid.UUID | None:
    """The chat uuid `chat:<uuid>` callback data names; None for any other."""
    if not data.startswith(CHAT_PREFIX):
        return None
    try:
        return uuid.UUID(data[len(CHAT_PREFIX) :])
    except ValueError:
        return None


def auto_reply_chat_uuid(auto_reply_id: int, attempt: int) -> uuid.UUID:
    """The uuid of the chat an auto-reply's attempt records: known before the call, so
    that the attempt's run may die during it and the chat still be recorded under the
    uuid its message carries (chat uuids are tenancy-checked, not secrets)."""
    return uuid.uuid5(AUTO_REPLY_CHATS, f"{auto_reply_id}:{attempt}")


def hold_callback_data(organization_id: int, callback_data) -> None:
    """Lock these sends' callback data for the caller's transaction (PostgreSQL): the
    webhook keeping a status for a send and the send's owner marking it unknown each
    hold it before looking for the other's rows, so one of the two sees both."""
    hold_message_ids(organization_id, list(callback_data))


def read_holding_callback_data(
    organization_id: int, callback_data, statement: Statement
) -> list[tuple]:
    """hold_callback_data, then `statement` read holding it, in one round trip: its rows.
    For a look that nearly always finds nothing (a status of every campaign message)."""
    return fetch_together([*holding(organization_id, list(callback_data)), statement])[-1]


def hold_callbacks(organization_id: int, chat_uuids) -> None:
    """hold_callback_data for these chats' callback data."""
    hold_callback_data(organization_id, [chat_callback(chat_uuid) for chat_uuid in chat_uuids])


def is_unknown(chat: Chat) -> bool:
    """A send recorded with no message id: failed before WhatsApp answered with one."""
    return chat.type == ChatType.OUTBOUND and not chat.wam_id and chat.status == ChatStatus.FAILED


def settle_named_chats(record: StatusesKept) -> None:
    """Statuses kept aside (their message id matches no chat) that name a chat of the
    organization by `chat:<uuid>`: settle each chat recorded with no message id.
    Registered for the kept statuses in SendingConfig.ready; runs in the webhook's
    transaction, which holds the statuses' message ids."""
    organization, updates = record.organization, record.updates
    named: dict[uuid.UUID, str] = {}
    for update in updates:
        chat_uuid = named_chat(update.callback_data)
        if chat_uuid is not None:
            named.setdefault(chat_uuid, update.wam_id)
    if not named:
        return
    hold_callbacks(organization.pk, named)
    chats = Chat.objects.filter(
        organization=organization, uuid__in=named, type=ChatType.OUTBOUND
    ).select_related("contact", "number")
    for chat in chats:
        if chat.wam_id == named[chat.uuid]:
            # Settled by a send that recorded it meanwhile, before these statuses were
            # stored: they are attached to it now.
            apply_kept_statuses(chat)
        elif is_unknown(chat):
            settle(chat, named[chat.uuid])


def settle_from_kept(chat: Chat) -> None:
    """A send just recorded with no message id (in its transaction): the statuses that
    came before it, kept aside with its callback data, settle it now."""
    if not is_unknown(chat):
        return
    hold_callbacks(chat.organization_id, [chat.uuid])
    wam_id = (
        ChatStatusEvent.objects.filter(
            organization_id=chat.organization_id,
            chat__isnull=True,
            callback_data=chat_callback(chat.uuid),
        )
        .order_by("timestamp", "id")
        .values_list("wam_id", flat=True)
        .first()
    )
    if wam_id is None:
        return
    if Chat.objects.filter(organization_id=chat.organization_id, wam_id=wam_id).exists():
        return  # another chat's message (WhatsApp's statuses carry their own send's data)
    settle(chat, wam_id)


def settle(chat: Chat, wam_id: str) -> None:
    """Give an unknown send's chat WhatsApp's message id: `accepted`, with message.sent,
    then moved forward by its statuses (message.status.update), as a send recording its
    answer would; an auto-reply that sent it is `sent`. Once: the update names the state
    it relies on (no message id yet)."""
    moved = Chat.objects.filter(pk=chat.pk, wam_id__isnull=True, status=ChatStatus.FAILED).update(
        wam_id=wam_id,
        counted_status=UNCOUNTED,
        status=ChatStatus.ACCEPTED,
        error_code=None,
        error_title="",
        error_details=None,
    )
    if not moved:
        return
    chat.wam_id, chat.status = wam_id, ChatStatus.ACCEPTED
    chat.error_code, chat.error_title, chat.error_details = None, "", None
    emit_chat(Event.MESSAGE_SENT, chat)
    apply_kept_statuses(chat)
    AutoReply.objects.filter(reply=chat, state=AutoReplyState.UNKNOWN).update(
        state=AutoReplyState.SENT, last_error="", updated_at=timezone.now()
    )


def record_unknown_send(
    *,
    organization: Organization,
    number: Number,
    contact: Contact,
    metadata: dict[str, Any],
    chat_uuid: uuid.UUID,
) -> Chat:
    """The chat of a send whose run died during the call (an auto-reply's): failed, with no
    message id, under the uuid its message named, so that its status webhooks settle it;
    the statuses that came already settle it now. The chat already recorded under that
    uuid, when the run recorded one before it died."""
    error = GatewayError(FailureKind.TIMEOUT, DIED_DURING_THE_CALL, type="outcome_unknown")
    return record_failure(
        organization=organization,
        number=number,
        contact=contact,
        metadata=metadata,
        error=error,
        chat_uuid=chat_uuid,
        then=settle_from_kept,
    )


def is_settled(chat: Chat) -> bool:
    """Whether a status has settled this unknown send's chat, looked at holding its
    callback data (the caller's transaction), so that a settlement under way is seen
    once committed, and one that comes after sees what the caller wrote."""
    hold_callbacks(chat.organization_id, [chat.uuid])
    return Chat.objects.filter(pk=chat.pk, wam_id__isnull=False).exists()
