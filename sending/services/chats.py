"""Recording what the channel answered a send: the chat, exactly once.

Once the channel has answered, its answer is recorded exactly once: a connection lost
meanwhile is reopened and the chat inserted again (`record`); a database that stays
away is a SendNotRecorded carrying what the channel said, which is also logged. A
failed send is recorded too, as a `failed` chat with the error (`record_failure`).
"""

import logging
import uuid
from collections.abc import Callable
from typing import Any, cast

from django.db import IntegrityError, connection, transaction

from accounts.models import Organization
from business_numbers.gateway import FailureKind, GatewayError
from business_numbers.models import Number
from contacts.models import Contact
from events.models import Event
from events.services import event_batch
from messaging_project.core import rows
from messaging_project.core.database import UNAVAILABLE_ERRORS, reconnecting
from messaging_project.core.metrics import count_send
from sending.models import UNCOUNTED, Chat, ChatStatus, ChatType
from sending.queries import hold_message_ids
from sending.recorded import MessagesOut, announce
from sending.services.conversations import with_sent_conversations
from sending.services.events import emit_chat, emit_chats, emit_refused_send
from sending.services.statuses import apply_all_kept_statuses, apply_kept_statuses

logger = logging.getLogger(__name__)

# What a send's answer may set the new chat to; any other `message_status` is `accepted`
# (`failed` is a refusal, see `deliver`; `received` belongs to inbound chats).
SEND_STATUSES = {
    ChatStatus.ACCEPTED,
    ChatStatus.HELD_FOR_QUALITY_ASSESSMENT,
    ChatStatus.PAUSED,
    ChatStatus.SENT,
    ChatStatus.DELIVERED,
    ChatStatus.READ,
}


class SendNotRecorded(Exception):
    """The channel answered a send, but the database could not record the chat even after
    reconnecting: the message may have been sent. Carries what the channel said."""

    def __init__(self, *, wam_id: str | None, error: GatewayError | None) -> None:
        super().__init__(f"send not recorded (message id {wam_id})")
        self.wam_id = wam_id  # WhatsApp's id, when it accepted the message
        self.error = error  # the channel's error, when it did not


class SendFailed(Exception):
    """The channel did not accept a send, or answered it in a way that cannot be trusted.

    `error` is what went wrong (the gateway's error), `chat` the failed chat recorded for it.
    """

    def __init__(self, *, error: GatewayError, chat: Chat) -> None:
        super().__init__(error.message)
        self.error = error
        self.chat = chat


def accepted_chat(
    *,
    organization: Organization,
    number: Number,
    contact: Contact,
    metadata: dict[str, Any],
    message: dict,
) -> Chat:
    """The unsaved chat of a send the channel accepted; `message` is its answer's
    `messages[0]` (an id, and a message_status text or none)."""
    status = message.get("message_status")
    return Chat(
        organization=organization,
        number=number,
        contact=contact,
        type=ChatType.OUTBOUND,
        wam_id=message["id"],
        metadata=metadata,
        status=status if status in SEND_STATUSES else ChatStatus.ACCEPTED,
    )


def record_accepted(chats: list[Chat]) -> list[Chat | SendFailed]:
    """Record many accepted sends of one organization (a campaign's batch) as `record`
    does one: in one transaction holding their message ids, one insert, one message.sent
    emission, and the statuses kept aside for any of them. Each chat comes back saved,
    or as the SendFailed of an id the organization already had (then the batch is
    recorded one by one, where that id is refused alone). A database that stays away is
    a SendNotRecorded for the whole batch."""
    if not chats:
        return []

    def insert() -> list[Chat]:
        # A batch (events.services): the endpoints looked up once for the conversations
        # made and the messages sent.
        with event_batch():
            hold_message_ids(chats[0].organization_id, [chat.wam_id for chat in chats])
            for chat in chats:
                # A rolled-back attempt's may not exist; with_sent_conversations sets it again.
                chat.conversation = None  # type: ignore[assignment]
            with_sent_conversations(chats)
            rows.insert_all(chats, connection)  # bulk_create(), uncompiled
            emit_chats(Event.MESSAGE_SENT, chats)
            announce(MessagesOut(chats))
            apply_all_kept_statuses(chats)
        return chats

    try:
        recorded: list[Chat | SendFailed] = list(reconnecting(insert))
    except IntegrityError:
        # A repeated message id, or an attempt whose answer was lost that committed (the
        # uuids are unique): one by one, as a single send would.
        for chat in chats:
            chat.pk = None
            chat._state.adding = True
        recorded = [record_one_accepted(chat) for chat in chats]
    except UNAVAILABLE_ERRORS as lost:
        logger.error(
            "Sends not recorded, the database is unavailable (%s): organization %s, message ids %s",
            lost,
            chats[0].organization_id,
            [chat.wam_id for chat in chats],
        )
        raise SendNotRecorded(wam_id=None, error=None) from lost
    for outcome in recorded:
        if isinstance(outcome, Chat):
            count_send("accepted", 200)
    return recorded


def record_one_accepted(chat: Chat) -> Chat | SendFailed:
    try:
        return record(chat)
    except IntegrityError:
        error = repeated_message_id(cast(str, chat.wam_id))  # accepted: it has its id
        failed = record_failure(
            organization=chat.organization,
            number=chat.number,
            contact=chat.contact,
            metadata=chat.metadata,
            error=error,
        )
        return SendFailed(error=error, chat=failed)


def record(
    chat: Chat,
    *,
    error: GatewayError | None = None,
    then: Callable[[Chat], None] | None = None,
) -> Chat:
    """Insert a chat the channel has answered for, once, through a lost connection;
    `then(chat)`, when given, in the same transaction.

    Raises IntegrityError for a message id the organization already has, and
    SendNotRecorded (after logging what is known) when the database stays away.
    """

    def insert() -> Chat:
        try:
            with event_batch():  # as record_accepted's
                # Statuses Meta posted before this insert were kept aside: take them in
                # the same transaction, holding the id against a webhook storing more.
                hold_message_ids(chat.organization_id, [chat.wam_id] if chat.wam_id else [])
                # A rolled-back attempt's may not exist; with_sent_conversations sets it again.
                chat.conversation = None  # type: ignore[assignment]
                with_sent_conversations([chat])
                rows.insert(chat, connection)  # save(force_insert=True), uncompiled
                if chat.status != ChatStatus.FAILED:  # accepted by the channel
                    emit_chat(Event.MESSAGE_SENT, chat)  # sending/services/events.py
                elif error is not None:
                    emit_refused_send(chat, error)
                announce(MessagesOut([chat]))
                apply_kept_statuses(chat)
                if then is not None:
                    then(chat)
        except IntegrityError:
            # An attempt whose answer was lost may have committed: the uuid is unique.
            stored = Chat.objects.filter(uuid=chat.uuid).first()
            if stored is None:
                raise
            if chat.wam_id and chat.status != ChatStatus.FAILED and not stored.wam_id:
                return answer_unknown(stored, chat, then)
            return stored
        return chat

    try:
        return reconnecting(insert)
    except UNAVAILABLE_ERRORS as lost:
        # The only record left of what WhatsApp said: for an operator to reconcile.
        logger.error(
            "Send not recorded, the database is unavailable (%s): organization %s, "
            "contact %s, message id %s, status %s, error code %s, error %r",
            lost,
            chat.organization_id,
            chat.contact_id,
            chat.wam_id,
            chat.status,
            chat.error_code,
            chat.error_title,
        )
        raise SendNotRecorded(wam_id=chat.wam_id, error=error) from lost


def answer_unknown(stored: Chat, chat: Chat, then: Callable[[Chat], None] | None) -> Chat:
    """A send's answer, for the chat recorded `unknown` under its uuid while it was under
    way (by a run that took this one's for dead, inbound/auto_replies.py): the answer settles it
    as its status webhook would (sending/services/settlement.py), once, and `then(chat)`
    runs as for a chat recorded."""
    with transaction.atomic():
        hold_message_ids(stored.organization_id, [chat.wam_id])
        settled = Chat.objects.filter(
            pk=stored.pk, wam_id__isnull=True, status=ChatStatus.FAILED
        ).update(
            wam_id=chat.wam_id,
            counted_status=UNCOUNTED,
            status=chat.status,
            error_code=None,
            error_title="",
            error_details=None,
        )
        stored.refresh_from_db()
        if stored.contact_id == chat.contact_id:
            stored.contact = chat.contact
        if settled:
            emit_chat(Event.MESSAGE_SENT, stored)
            apply_kept_statuses(stored)
        if then is not None and stored.wam_id == chat.wam_id:
            then(stored)
    return stored


def repeated_message_id(wam_id: str) -> GatewayError:
    logger.warning("WhatsApp answered a send with the id of an earlier message: %s", wam_id)
    return GatewayError(
        FailureKind.UNAVAILABLE,
        "The WhatsApp channel answered with the message id of an earlier message.",
        type="invalid_response",
        details=f"message id {wam_id}",
        http_status=200,
    )


def failed_on_arrival(wam_id: str) -> GatewayError:
    """A 200 whose message_status is `failed`: WhatsApp took the request and refused the message."""
    logger.warning("WhatsApp answered a send with message_status failed: %s", wam_id)
    return GatewayError(
        FailureKind.REFUSED,
        "The WhatsApp channel answered that the message failed.",
        type="message_failed",
        details=f"message id {wam_id}",
        http_status=200,
    )


def record_failure(
    *,
    organization: Organization,
    number: Number,
    contact: Contact,
    metadata: dict[str, Any],
    error: GatewayError,
    wam_id: str | None = None,
    chat_uuid: uuid.UUID | None = None,
    then: Callable[[Chat], None] | None = None,
    created_by: int = 0,
) -> Chat:
    """The failed chat of a send; `wam_id` when the channel gave the failed message an id,
    `chat_uuid` the uuid its message named (its callback data), `then(chat)` in the
    transaction that records it, `created_by` the staff member who sent it."""
    # Code and message have their columns; the rest of Graph's error object goes here.
    details = {
        "type": error.type,
        "details": error.details,
        "fbtrace_id": error.fbtrace_id,
        "http_status": error.http_status,
    }
    if error.unusable_code is not None:
        details["code"] = error.unusable_code  # a code the error_code column cannot hold
    chat = Chat(
        organization=organization,
        number=number,
        contact=contact,
        type=ChatType.OUTBOUND,
        wam_id=wam_id,
        metadata=metadata,
        status=ChatStatus.FAILED,
        error_code=error.code,
        error_title=error.message,
        error_details=details,
        created_by=created_by,
    )
    if chat_uuid is not None:
        chat.uuid = chat_uuid
    try:
        chat = record(chat, error=error, then=then)
    except IntegrityError:
        # The id is one of the organization's earlier messages: kept with the details.
        chat.wam_id = None
        chat = record(chat, error=error, then=then)
    return chat
