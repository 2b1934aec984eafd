"""Sending a message: the one path from the API (and the auto-replies) to the channel.

A send validates what it can, finds or creates the contact (a creation is its own
short transaction), calls the channel outside any transaction (a slow WhatsApp must
not hold database locks), then records the chat with the status the channel gave
(sending/services/chats.py). A failed send is recorded too, as `failed` with the error,
and the caller gets a SendFailed carrying the channel's error and that chat.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.db import IntegrityError

from accounts.models import Organization
from business_numbers.gateway import GatewayError, gateway_for
from business_numbers.models import MessageTemplate, Number
from business_numbers.services import (
    check_approved,
    check_parameter_count,
    rendered_metadata,
    synced_template,
)
from contacts.models import Contact
from contacts.services import contact_for_phone
from messaging_project.api.idempotency import point_of_no_return
from messaging_project.core.metrics import count_send
from sending.models import Chat, ChatStatus
from sending.services.chats import (
    SendFailed,
    accepted_chat,
    failed_on_arrival,
    record,
    record_failure,
    repeated_message_id,
)
from sending.services.payloads import (
    addressed,
    button_payload,
    media_payload,
    replying,
    template_payload,
    text_payload,
    with_callback,
)
from sending.services.refusals import check_service_window
from sending.services.routing import Route, route
from sending.services.settlement import chat_callback, settle_from_kept

# send_template's default: the template is looked up.
LOOK_UP = object()


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
    preview_url: bool = True,
    reply_to: str | None = None,
    chat_uuid: uuid.UUID | None = None,
    sender: Number | str | None = None,
    created_by: int = 0,
) -> SendResult:
    """A text message, or with buttons an interactive reply-button message.

    `phone` is digits with the country code; `phone_input` the number as the caller
    wrote it. The input is expected valid (the API's serializer checks WhatsApp's limits).
    Header and footer go only with buttons: a text message has neither (the original
    product ignores them too). `new_contact` holds the names and email of a contact the
    send creates; `contact`, when given, is the recipient (an auto-reply's sender, who
    may have no number). `recorded`, when given, is called with the accepted chat in the
    transaction that records it (an auto-reply's end: one commit fewer). Without
    `contact`, a ServiceWindowClosed when the organization enforces the window and the
    number has not written in 24 hours. `chat_uuid`: as `deliver` takes it; `sender`:
    the number it goes from (the API's `from`, docs/numbers.md), else chosen by `route`;
    `created_by`: the staff member who sent it (0: the API or the service itself).
    """
    way = route(organization, sender=sender, phone=phone, contact=contact, reply_to=reply_to)
    if contact is None:
        check_service_window(organization, phone, way.number)
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
        payload = text_payload(phone=phone, message=message, preview_url=preview_url)
        metadata = text_metadata(message)
    return deliver(
        organization=organization,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=metadata,
        new_contact=new_contact,
        contact=contact,
        recorded=recorded,
        way=way,
        chat_uuid=chat_uuid,
        created_by=created_by,
    )


def text_metadata(message: str) -> dict[str, Any]:
    """What a text send's chat keeps."""
    return {"type": "text", "text": {"body": message}}


def media_metadata(payload: dict[str, Any]) -> dict[str, Any]:
    """What a media send's chat keeps: what was sent, in the shape inbound media is
    recorded in."""
    media_type = payload["type"]
    return {"type": media_type, media_type: payload[media_type]}


def auto_reply_metadata(*, message: str, media_type: str) -> dict[str, Any]:
    """What an auto-reply's chat keeps (`message`: a media reply's URL), as its send
    records it."""
    if media_type:
        return media_metadata(media_payload(phone="", media_type=media_type, link=message))
    return text_metadata(message)


def send_template(
    *,
    organization: Organization,
    phone: str,
    template: dict[str, Any],
    phone_input: str | None = None,
    new_contact: dict[str, str | None] | None = None,
    before_send: Callable[[], None] | None = None,
    known_template: MessageTemplate | None | object = LOOK_UP,
    reply_to: str | None = None,
    sender: Number | str | None = None,
    contact: Contact | None = None,
    created_by: int = 0,
) -> SendResult:
    """A template message; `template` is `{name, language: {code}, components?}` as the API got it.

    When the template is known locally its body parameters are counted (a mismatch
    is a ValidationError, before anything is sent) and the chat keeps the rendered text.
    `known_template`: what known_template() gave a caller that sends it many times;
    `contact`, `created_by` as send_message takes them.
    """
    way = route(organization, sender=sender, phone=phone, contact=contact, reply_to=reply_to)
    known = (
        synced_template(way.number, template)
        if known_template is LOOK_UP
        else cast(MessageTemplate | None, known_template)  # anything but LOOK_UP is one
    )
    metadata = template_metadata(template, known)
    payload = template_payload(phone=phone, template=template)
    return deliver(
        organization=organization,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=metadata,
        new_contact=new_contact,
        contact=contact,
        before_send=before_send,
        way=way,
        created_by=created_by,
    )


def template_metadata(template: dict[str, Any], known: MessageTemplate | None) -> dict[str, Any]:
    """What a template send's chat keeps: the rendered text when the template is known
    locally (its body parameters counted first: a mismatch is a ValidationError, before
    anything is sent), else the template as it was sent. A template known locally and not
    approved is a TemplateNotApproved: every template send comes through here."""
    check_approved(known)
    if known is None:
        return {
            "type": "template",
            "template": template_payload(phone="", template=template)["template"],
        }
    components = template.get("components") or []
    check_parameter_count(known, components)
    return rendered_metadata(known, components)


def send_media(
    *,
    organization: Organization,
    phone: str,
    media_type: str,
    media_url: str | None = None,
    media_id: str | None = None,
    caption: str | None = None,
    file_name: str | None = None,
    phone_input: str | None = None,
    new_contact: dict[str, str | None] | None = None,
    contact: Contact | None = None,
    recorded: Callable[[Chat], None] | None = None,
    reply_to: str | None = None,
    chat_uuid: uuid.UUID | None = None,
    sender: Number | str | None = None,
    created_by: int = 0,
) -> SendResult:
    """A media message by link (image, document, audio, video, sticker).

    The input is expected valid (the API's serializer and the canned replies' checks:
    a public http(s) URL, a caption only where Meta takes one). `new_contact` holds the
    names and email a contact created for the number gets. Without `contact`, the
    service window is checked as send_message checks it. `chat_uuid`: as `deliver`
    takes it; `sender`, `created_by` as send_message takes them.
    """
    way = route(organization, sender=sender, phone=phone, contact=contact, reply_to=reply_to)
    if contact is None:
        check_service_window(organization, phone, way.number)
    payload = media_payload(
        phone=phone,
        media_type=media_type,
        link=media_url,
        media_id=media_id,
        caption=caption,
        file_name=file_name,
    )
    return deliver(
        organization=organization,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=media_metadata(payload),
        new_contact=new_contact,
        contact=contact,
        recorded=recorded,
        way=way,
        chat_uuid=chat_uuid,
        created_by=created_by,
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
    way: Route,
    before_send: Callable[[], None] | None = None,
    recorded: Callable[[Chat], None] | None = None,
    chat_uuid: uuid.UUID | None = None,
    created_by: int = 0,
) -> SendResult:
    """`before_send`, when given, is called just before the channel is: a campaign waits
    there for its turn at the number's rate (campaigns/pacing.py). `recorded`, with the
    accepted chat, in the transaction that records it. `way`: the number it goes from and
    the message it answers (`route`). `chat_uuid`: the uuid the chat is recorded under
    (an auto-reply's, known before the call); a new one when not given. `created_by`:
    the staff member who sent it, kept on the chat, failed or not."""
    number, answered = way.number, way.answered
    gateway = gateway_for(number)  # ChannelNotConfigured before any contact is made
    if answered is not None:
        payload = replying(payload, answered)
        metadata = {**metadata, "context": {"message_id": answered}}
    if contact is None:
        contact = contact_for_phone(organization=organization, phone=phone, **(new_contact or {}))
    # The chat's uuid, chosen now, names the send for its status webhooks: whatever the
    # call's outcome, the chat recorded is the one the message names.
    chat_uuid = chat_uuid or uuid.uuid4()
    payload = with_callback(payload, chat_callback(chat_uuid))
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
            organization=organization,
            number=number,
            contact=contact,
            metadata=metadata,
            error=error,
            chat_uuid=chat_uuid,
            created_by=created_by,
            # No answer: WhatsApp may have it, and its statuses may have come already.
            then=settle_from_kept if error.may_have_been_sent else None,
        )
        raise SendFailed(error=error, chat=failed) from error
    # The gateway checked the answer's shape: an id, and a message_status text or none.
    message = answer["messages"][0]
    wam_id, status = message["id"], message.get("message_status")
    if status == ChatStatus.FAILED:
        count_send("failed", 200)
        answer_error = failed_on_arrival(wam_id)
        failed = record_failure(
            organization=organization,
            number=number,
            contact=contact,
            metadata=metadata,
            error=answer_error,
            wam_id=wam_id,
            chat_uuid=chat_uuid,
            created_by=created_by,
        )
        raise SendFailed(error=answer_error, chat=failed)
    chat = accepted_chat(
        organization=organization,
        number=number,
        contact=contact,
        metadata=metadata,
        message=message,
    )
    chat.uuid = chat_uuid
    chat.created_by = created_by
    try:
        chat = record(chat, then=recorded)
    except IntegrityError:
        # The id is already one of this organization's messages: the status updates
        # could not tell the two apart, so this answer cannot be trusted.
        answer_error = repeated_message_id(wam_id)
        failed = record_failure(
            organization=organization,
            number=number,
            contact=contact,
            metadata=metadata,
            error=answer_error,
            chat_uuid=chat_uuid,
            created_by=created_by,
        )
        raise SendFailed(error=answer_error, chat=failed) from None
    count_send("accepted", 200)
    chat.contact = contact  # the same instance, so the response needs no query
    return SendResult(
        chat=chat, answer=answer, phone_input=phone_input or (f"+{phone}" if phone else "")
    )
