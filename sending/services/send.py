"""Sending a message: the one path from the API (and the auto-replies) to the channel.

A send validates what it can, finds or creates the contact (a creation is its own
short transaction), calls the channel outside any transaction (a slow WhatsApp must
not hold database locks), then records the chat with the status the channel gave. A failed send is
recorded too, as `failed` with the error, and the caller gets a SendFailed carrying the
channel's error and that chat.

Once the channel has answered, its answer is recorded exactly once: a connection lost
meanwhile is reopened and the chat inserted again (`record`); a database that stays
away is a SendNotRecorded carrying what the channel said, which is also logged.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import Organization
from contacts.models import Contact
from contacts.services import contact_for_phone
from events.models import Event
from messaging_project.api.idempotency import point_of_no_return
from messaging_project.core.database import UNAVAILABLE_ERRORS, reconnecting
from messaging_project.core.metrics import count_send
from sending.events import emit_chat, emit_chats
from sending.gateway import FailureKind, GatewayError, gateway_for
from sending.models import Chat, ChatStatus, ChatStatusEvent, ChatType, MessageTemplate
from sending.services.payloads import (
    addressed,
    button_payload,
    media_payload,
    template_payload,
    text_payload,
)
from sending.services.templates import check_parameter_count, rendered_metadata
from sending.statuses import apply_kept_statuses, hold_message_ids

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


# send_template's default: the template is looked up.
LOOK_UP = object()


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


@dataclass(frozen=True)
class SendResult:
    chat: Chat
    answer: dict[str, Any]  # the channel's answer: messaging_product, contacts, messages
    phone_input: str  # the number as the caller wrote it, echoed in `contacts[0].input`

    @property
    def wa_id(self) -> str:
        contacts = self.answer.get("contacts") or [{}]
        return str(contacts[0].get("wa_id") or self.chat.contact.phone)


def send_message(
    *,
    organization: Organization,
    phone: str,
    message: str,
    phone_input: str | None = None,
    header: str | None = None,
    footer: str | None = None,
    buttons: list[dict[str, str]] | None = None,
    new_contact: dict[str, str | None] | None = None,
    contact: Contact | None = None,
    recorded: Callable[[Chat], None] | None = None,
) -> SendResult:
    """A text message, or with buttons an interactive reply-button message.

    `phone` is digits with the country code; `phone_input` the number as the caller
    wrote it. The input is expected valid (the API's serializer checks WhatsApp's limits).
    Header and footer go only with buttons: a text message has neither (the original
    product ignores them too). `new_contact` holds the names and email of a contact the
    send creates; `contact`, when given, is the recipient (an auto-reply's sender, who
    may have no number). `recorded`, when given, is called with the accepted chat in the
    transaction that records it (an auto-reply's end: one commit fewer).
    """
    if buttons:
        payload = button_payload(
            phone=phone, message=message, buttons=buttons, header=header, footer=footer
        )
        metadata = {
            "type": "interactive",
            "text": {"header": header or None, "body": message, "footer": footer or None},
            "buttons": [
                {"type": "reply", "text": button["title"], "value": button["id"]}
                for button in buttons
            ],
        }
    else:
        payload = text_payload(phone=phone, message=message)
        metadata = {"type": "text", "text": {"body": message}}
    return deliver(
        organization=organization,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=metadata,
        new_contact=new_contact,
        contact=contact,
        recorded=recorded,
    )


def send_template(
    *,
    organization: Organization,
    phone: str,
    template: dict[str, Any],
    phone_input: str | None = None,
    new_contact: dict[str, str | None] | None = None,
    before_send: Callable[[], None] | None = None,
    known_template: MessageTemplate | None | object = LOOK_UP,
) -> SendResult:
    """A template message; `template` is `{name, language: {code}, components?}` as the API got it.

    When the template is known locally its body parameters are counted (a mismatch
    is a ValidationError, before anything is sent) and the chat keeps the rendered text.
    `known_template`: what known_template() gave a caller that sends it many times.
    """
    known = synced_template(organization, template) if known_template is LOOK_UP else known_template
    metadata = template_metadata(template, known)
    payload = template_payload(phone=phone, template=template)
    return deliver(
        organization=organization,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=metadata,
        new_contact=new_contact,
        before_send=before_send,
    )


def template_metadata(template: dict[str, Any], known: MessageTemplate | None) -> dict[str, Any]:
    """What a template send's chat keeps: the rendered text when the template is known
    locally (its body parameters counted first: a mismatch is a ValidationError, before
    anything is sent), else the template as it was sent."""
    if known is None:
        return {
            "type": "template",
            "template": template_payload(phone="", template=template)["template"],
        }
    components = template.get("components") or []
    check_parameter_count(known, components)
    return rendered_metadata(known, components)


def synced_template(organization: Organization, template: dict[str, Any]):
    """The organization's synced template a send names (`name`, `language.code`), or None."""
    return (
        MessageTemplate.objects.live()
        .filter(
            organization=organization,
            name=template["name"],
            language=template["language"]["code"],
        )
        .first()
    )


def send_media(
    *,
    organization: Organization,
    phone: str,
    media_type: str,
    media_url: str,
    caption: str | None = None,
    file_name: str | None = None,
    phone_input: str | None = None,
    new_contact: dict[str, str | None] | None = None,
    contact: Contact | None = None,
    recorded: Callable[[Chat], None] | None = None,
) -> SendResult:
    """A media message by link (image, document, audio, video, sticker).

    The input is expected valid (the API's serializer and the canned replies' checks:
    a public http(s) URL, a caption only where Meta takes one). `new_contact` holds the
    names and email a contact created for the number gets.
    """
    payload = media_payload(
        phone=phone, media_type=media_type, link=media_url, caption=caption, file_name=file_name
    )
    # The chat keeps what was sent, in the shape inbound media is recorded in.
    metadata = {"type": media_type, media_type: payload[media_type]}
    return deliver(
        organization=organization,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=metadata,
        new_contact=new_contact,
        contact=contact,
        recorded=recorded,
    )


def deliver(
    *,
    organization: Organization,
    phone: str,
    phone_input: str | None,
    payload: dict[str, Any],
    metadata: dict[str, Any],
    new_contact: dict[str, str | None] | None = None,
    contact: Contact | None = None,
    before_send: Callable[[], None] | None = None,
    recorded: Callable[[Chat], None] | None = None,
) -> SendResult:
    """`before_send`, when given, is called just before the channel is: a campaign waits
    there for its turn at the number's rate (campaigns/pacing.py). `recorded`, with the
    accepted chat, in the transaction that records it."""
    gateway = gateway_for(organization)  # ChannelNotConfigured before any contact is made
    if contact is None:
        contact = contact_for_phone(organization=organization, phone=phone, **(new_contact or {}))
    payload = addressed(payload, phone=contact.phone, user_id=contact.user_id)
    # From here the message may reach WhatsApp: an error of ours must not free the
    # request's Idempotency-Key for a retry that would send it again.
    point_of_no_return()
    if before_send is not None:
        before_send()
    try:
        # Outside any transaction: the network may take WHATSAPP_TIMEOUT seconds.
        answer = gateway.send_message(payload)
    except GatewayError as error:
        count_send(str(error.kind), error.http_status)
        failed = record_failure(
            organization=organization, contact=contact, metadata=metadata, error=error
        )
        raise SendFailed(error=error, chat=failed) from error
    # The gateway checked the answer's shape: an id, and a message_status text or none.
    message = answer["messages"][0]
    wam_id, status = message["id"], message.get("message_status")
    if status == ChatStatus.FAILED:
        count_send("failed", 200)
        error = failed_on_arrival(wam_id)
        failed = record_failure(
            organization=organization,
            contact=contact,
            metadata=metadata,
            error=error,
            wam_id=wam_id,
        )
        raise SendFailed(error=error, chat=failed)
    chat = accepted_chat(
        organization=organization, contact=contact, metadata=metadata, message=message
    )
    try:
        chat = record(chat, then=recorded)
    except IntegrityError:
        # The id is already one of this organization's messages: the status updates
        # could not tell the two apart, so this answer cannot be trusted.
        error = repeated_message_id(wam_id)
        failed = record_failure(
            organization=organization, contact=contact, metadata=metadata, error=error
        )
        raise SendFailed(error=error, chat=failed) from None
    count_send("accepted", 200)
    chat.contact = contact  # the same instance, so the response needs no query
    return SendResult(
        chat=chat, answer=answer, phone_input=phone_input or (f"+{phone}" if phone else "")
    )


def accepted_chat(
    *, organization: Organization, contact: Contact, metadata: dict[str, Any], message: dict
) -> Chat:
    """The unsaved chat of a send the channel accepted; `message` is its answer's
    `messages[0]` (an id, and a message_status text or none)."""
    status = message.get("message_status")
    return Chat(
        organization=organization,
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
        with transaction.atomic():
            hold_message_ids(chats[0].organization_id, [chat.wam_id for chat in chats])
            Chat.objects.bulk_create(chats)
            emit_chats(Event.MESSAGE_SENT, chats)
            kept = set(
                ChatStatusEvent.objects.filter(
                    organization_id=chats[0].organization_id,
                    wam_id__in=[chat.wam_id for chat in chats],
                    chat__isnull=True,
                ).values_list("wam_id", flat=True)
            )
            for chat in chats:
                if chat.wam_id in kept:
                    apply_kept_statuses(chat)
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
        error = repeated_message_id(chat.wam_id)
        failed = record_failure(
            organization=chat.organization,
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
            with transaction.atomic():
                # Statuses Meta posted before this insert were kept aside: take them in
                # the same transaction, holding the id against a webhook storing more.
                hold_message_ids(chat.organization_id, [chat.wam_id] if chat.wam_id else [])
                chat.save(force_insert=True)
                if chat.status != ChatStatus.FAILED:  # accepted by the channel
                    emit_chat(Event.MESSAGE_SENT, chat)  # sending/events.py
                apply_kept_statuses(chat)
                if then is not None:
                    then(chat)
        except IntegrityError:
            # An attempt whose answer was lost may have committed: the uuid is unique.
            stored = Chat.objects.filter(uuid=chat.uuid).first()
            if stored is None:
                raise
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
    contact: Contact,
    metadata: dict[str, Any],
    error: GatewayError,
    wam_id: str | None = None,
) -> Chat:
    """The failed chat of a send; `wam_id` when the channel gave the failed message an id."""
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
        contact=contact,
        type=ChatType.OUTBOUND,
        wam_id=wam_id,
        metadata=metadata,
        status=ChatStatus.FAILED,
        error_code=error.code,
        error_title=error.message,
        error_details=details,
    )
    try:
        chat = record(chat, error=error)
    except IntegrityError:
        # The id is one of the organization's earlier messages: kept with the details.
        chat.wam_id = None
        chat = record(chat, error=error)
    return chat
