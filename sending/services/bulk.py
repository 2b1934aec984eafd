"""One template to many numbers (a campaign's sends): the channel called from the
caller's own threads at the caller's pace, the answers recorded together.

A campaign paces its sends itself and its sending threads hold no database connection,
so the send is offered in three steps: `prepare_template_send` once (the gateway and
what each chat keeps), `TemplateSend.call` in any thread (the network only), and
`record_answers` for the answers gathered so far (their chats in as few statements as
the send service can write them).
"""

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from accounts.models import Organization
from business_numbers.gateway import Gateway, GatewayError, gateway_for
from business_numbers.models import Number
from business_numbers.services import synced_template
from contacts.models import Contact
from messaging_project.core.metrics import count_send
from sending.models import Chat, ChatStatus
from sending.services.chats import (
    SendFailed,
    SendNotRecorded,
    accepted_chat,
    failed_on_arrival,
    record_accepted,
    record_failure,
)
from sending.services.payloads import addressed, template_payload, with_callback
from sending.services.send import template_metadata
from sending.services.settlement import send_chat_uuid

logger = logging.getLogger(__name__)

Answer = dict[str, Any] | GatewayError  # the channel's answer, or why there is none


@dataclass(frozen=True)
class TemplateSend:
    """A template send prepared for many recipients of one organization, from one of
    its numbers."""

    organization: Organization
    number: Number
    template: dict[str, Any]  # as the API takes it: name, language.code, components
    gateway: Gateway
    metadata: dict[str, Any]  # what each chat keeps (the rendered text when known)

    def call(
        self,
        contact: Contact,
        *,
        callback_data: str = "",
        may_write: Callable[[], bool] | None = None,
    ) -> Answer:
        """Send to `contact`: the network only, no database. The channel's answer, or
        the GatewayError it gave. `callback_data` names the send for its status webhooks
        (payloads.with_callback); `may_write` as Gateway.send_message takes it (its
        NotWritten is raised)."""
        message = template_payload(phone=contact.phone, template=self.template)
        payload = addressed(
            with_callback(message, callback_data),
            phone=contact.phone,
            user_id=contact.user_id,
        )
        try:
            return self.gateway.send_message(payload, may_write=may_write)
        except GatewayError as error:
            return error


def prepare_template_send(
    *, organization: Organization, number: Number, template: dict[str, Any]
) -> TemplateSend:
    """Raises ChannelNotConfigured, and a ValidationError when the number's synced
    template does not take these parameters (then every send would fail alike)."""
    gateway = gateway_for(number)
    known = synced_template(number, template)
    return TemplateSend(
        organization=organization,
        number=number,
        template=template,
        gateway=gateway,
        metadata=template_metadata(template, known),
    )


@dataclass(frozen=True)
class Outcome:
    """What became of one send: its chat, and why it was not accepted when it was not."""

    contact: Contact
    chat: Chat | None  # None: accepted by the channel, but the chat could not be written
    error: GatewayError | None = None
    wam_id: str | None = None  # WhatsApp's id, when it gave one

    @property
    def accepted(self) -> bool:
        return self.error is None


def record_answers(
    send: TemplateSend,
    answers: list[tuple[Contact, Answer]],
    *,
    callback_data: list[str] | None = None,
) -> list[Outcome]:
    """Record each answer's chat (accepted, or failed with the error), in the order
    given; the accepted ones together. `callback_data`: what each message carried, in
    the same order; a failed chat is recorded under the uuid it names (send_chat_uuid),
    so that the statuses of a send whose answer never came settle that chat. A
    database that stays away leaves the accepted ones with no chat (logged with their
    message ids); it raises for a failure."""
    outcomes: list[Outcome | None] = [None] * len(answers)
    accepted: list[tuple[int, Contact, Chat]] = []
    for index, (contact, answer) in enumerate(answers):
        data = callback_data[index] if callback_data else ""
        chat_uuid = send_chat_uuid(send.organization.pk, data) if data else None
        if isinstance(answer, GatewayError):
            count_send(str(answer.kind), answer.http_status)
            outcomes[index] = refused(send, contact, answer, chat_uuid=chat_uuid)
            continue
        message = answer["messages"][0]
        if message.get("message_status") == ChatStatus.FAILED:
            count_send("failed", 200)
            error = failed_on_arrival(message["id"])
            outcomes[index] = refused(
                send, contact, error, wam_id=message["id"], chat_uuid=chat_uuid
            )
            continue
        chat = accepted_chat(
            organization=send.organization,
            number=send.number,
            contact=contact,
            metadata=send.metadata,
            message=message,
        )
        accepted.append((index, contact, chat))
    try:
        chats: Sequence[Chat | SendFailed | None] = record_accepted(
            [chat for _, _, chat in accepted]
        )
    except SendNotRecorded:
        chats = [None] * len(accepted)
    for (index, contact, chat), recorded in zip(accepted, chats, strict=True):
        if isinstance(recorded, SendFailed):
            outcomes[index] = Outcome(contact, recorded.chat, recorded.error, chat.wam_id)
        else:
            outcomes[index] = Outcome(contact, recorded, wam_id=chat.wam_id)
    return outcomes  # type: ignore[return-value]  # every index is filled above


def refused(
    send: TemplateSend,
    contact: Contact,
    error: GatewayError,
    *,
    wam_id: str | None = None,
    chat_uuid: uuid.UUID | None = None,
) -> Outcome:
    chat = record_failure(
        organization=send.organization,
        number=send.number,
        contact=contact,
        metadata=send.metadata,
        error=error,
        wam_id=wam_id,
        chat_uuid=chat_uuid,
    )
    return Outcome(contact, chat, error, wam_id)
