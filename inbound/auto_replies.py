"""The auto-reply to an inbound message (a text, a media message by link, or an
interactive message), sent by a task (docs/canned-replies.md).

Tasks run at least once (a worker that dies mid-task leaves it to another), so the
auto-reply is claimed before the channel is called. The webhook enqueues what it
matched (`owed`: the inbound chat, the canned reply, its text or media URL); the first
run writes the `AutoReply` as its claim, already `sending`, and the unique inbound chat
lets one run write it. Any other run, and a retry (which names the `AutoReply`), claims
by a conditional update from `retrying` (or `pending`, the rows the webhook wrote
before) to `sending`; only the run that wrote or moved it sends. A run that finds it
`sending` already knows that an earlier run died during the send: WhatsApp may have
delivered it or not, and we cannot ask, so the reply is marked `unknown` and logged
rather than sent a second time, with a failed chat recorded under the uuid the lost
message named (`auto_reply_chat_uuid`): its status webhooks, if it went out, settle the
chat and make the reply `sent` (sending/services/settlement.py). A send that got no
answer is `unknown` the same way.
"""

import json
import logging
from typing import Any, cast

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task

from business_numbers.gateway import ChannelNotConfigured, GatewayError
from contacts.models import Contact
from contacts.placeholders import fill_placeholders
from inbound.queries import OWNED, claimed_reply, write_claim
from messaging_project.core.interactive import with_texts_filled
from messaging_project.worker.priorities import INTERACTIVE
from messaging_project.worker.retries import retry_later
from sending.models import AutoReply, AutoReplyState, Chat
from sending.services import (
    DIED_DURING_THE_CALL,
    SendFailed,
    auto_reply_chat_uuid,
    auto_reply_metadata,
    is_settled,
    record_unknown_send,
    send_content,
    send_media,
    send_message,
)

logger = logging.getLogger(__name__)

CLAIMABLE = [AutoReplyState.PENDING, AutoReplyState.RETRYING]
TEXT_BODY_MAX = 4096  # WhatsApp's limit on a text message, after placeholders are filled


@task(priority=INTERACTIVE)
def send_auto_reply(auto_reply_id: int | None = None, *, owed: dict | None = None) -> str:
    """Send one auto-reply, at most once; the state it is left in. `owed` is what the
    webhook matched (its first run); a retry names the AutoReply instead."""
    if owed is not None and (written := write_claim(owed)) is not None:
        auto_reply_id = written
    else:
        if owed is not None:  # another run wrote it: claimed as a retry is
            auto_reply_id = (
                AutoReply.objects.filter(inbound_id=owed["inbound"])
                .values_list("pk", flat=True)
                .first()
            )
            if auto_reply_id is None:
                return "gone"  # the inbound chat was deleted meanwhile
        auto_reply_id = cast(int, auto_reply_id)  # else a retry, which names its AutoReply
        claimed = AutoReply.objects.filter(pk=auto_reply_id, state__in=CLAIMABLE).update(
            state=AutoReplyState.SENDING, attempts=F("attempts") + 1, updated_at=timezone.now()
        )
        if not claimed:
            return not_claimed(auto_reply_id)
    auto_reply, contact, number = claimed_reply(auto_reply_id)
    try:
        # Found by its number, or by its user id when it has none; answered from the
        # number it wrote to.
        recipient: dict[str, Any] = {
            "organization": auto_reply.organization,
            "sender": number,
            "phone": contact.phone,
            "phone_input": f"+{contact.phone}" if contact.phone else contact.user_id,
            "contact": contact,
        }
        # The reply's end is written with the chat, in its transaction: one commit (one
        # flush of PostgreSQL's log) fewer for every reply.
        sent: dict[str, Any] = {
            "recorded": lambda chat: finish(auto_reply, AutoReplyState.SENT, reply=chat),
            # Known before the call: the message names it whether or not this run lives.
            "chat_uuid": auto_reply_chat_uuid(auto_reply.pk, auto_reply.attempts),
        }
        message = outgoing(auto_reply, contact)
        if auto_reply.media_type == "interactive":  # the object, its texts filled
            send_content(**recipient, **sent, kind="interactive", content=json.loads(message))
        elif auto_reply.media_type:  # a media reply: `message` is its URL
            send_media(**recipient, **sent, media_type=auto_reply.media_type, media_url=message)
        else:
            send_message(**recipient, **sent, message=message)
    except SendFailed as failure:  # recorded as a failed chat by the send service
        return failed(auto_reply, failure.error, chat=failure.chat)
    except ChannelNotConfigured as error:
        logger.warning("Auto-reply %s not sent: the channel is not configured", auto_reply_id)
        return finish(auto_reply, AutoReplyState.FAILED, error=error.detail)
    return AutoReplyState.SENT


def outgoing(auto_reply: AutoReply, contact: Contact) -> str:
    """The reply's `message` as it goes out, placeholders filled from its recipient: a
    text cut to WhatsApp's limit (one left blank by empty fields goes as written:
    WhatsApp refuses a blank one), an interactive object's texts (its JSON text), a
    media reply's URL as written. The send and a lost send's chat both record this."""
    organization_name = auto_reply.organization.name

    def filled(text: str) -> str:
        return fill_placeholders(text, contact, organization_name=organization_name)

    if auto_reply.media_type == "interactive":
        return json.dumps(with_texts_filled(json.loads(auto_reply.message), filled))
    if auto_reply.media_type:
        return auto_reply.message
    message = filled(auto_reply.message)[:TEXT_BODY_MAX]
    return message if message.strip() else auto_reply.message


def not_claimed(auto_reply_id: int) -> str:
    """Another run has it, or had it: mark an unfinished claim unknown, send nothing."""
    if AutoReply.objects.filter(pk=auto_reply_id, state=AutoReplyState.SENDING).update(
        state=AutoReplyState.UNKNOWN, updated_at=timezone.now()
    ):
        logger.error(
            "Auto-reply %s was being sent by a run that never finished: WhatsApp may or "
            "may not have delivered it, so it is not sent again",
            auto_reply_id,
        )
        try:
            auto_reply, contact, number = claimed_reply(auto_reply_id)
        except AutoReply.DoesNotExist:
            return "gone"  # the inbound chat was deleted meanwhile
        chat = record_unknown_send(
            organization=auto_reply.organization,
            number=number,
            contact=contact,
            metadata=auto_reply_metadata(
                message=outgoing(auto_reply, contact), media_type=auto_reply.media_type
            ),
            chat_uuid=auto_reply_chat_uuid(auto_reply.pk, auto_reply.attempts),
        )
        return finish_unknown(auto_reply, chat, DIED_DURING_THE_CALL)
    state = AutoReply.objects.filter(pk=auto_reply_id).values_list("state", flat=True).first()
    return state or "gone"  # gone: the inbound chat was deleted meanwhile


def finish(auto_reply: AutoReply, state: str, *, reply=None, error: str = "") -> str:
    """Record how the run that owns the reply ended: only while a run owns it (OWNED)."""
    AutoReply.objects.filter(pk=auto_reply.pk, state__in=OWNED).update(
        state=state, reply=reply, last_error=error, updated_at=timezone.now()
    )
    return state


def finish_unknown(auto_reply: AutoReply, chat: Chat, error: str) -> str:
    """A reply whose outcome is unknown, with its chat: `sent` when a status webhook has
    settled the chat already, else `unknown` (a status that comes later settles both)."""
    with transaction.atomic():
        if is_settled(chat):
            return finish(auto_reply, AutoReplyState.SENT, reply=chat)
        return finish(auto_reply, AutoReplyState.UNKNOWN, reply=chat, error=error)


def failed(auto_reply: AutoReply, error: GatewayError, *, chat=None) -> str:
    """A send the channel did not accept: try again later if that could help, unless the
    message may have gone out (then it is `unknown`, not sent a second time)."""
    described = f"{error.kind}: {error.message}" + (f" (code {error.code})" if error.code else "")
    if error.may_have_been_sent:
        logger.error(
            "Auto-reply %s: no answer from WhatsApp (%s); it may or may not have been "
            "delivered, so it is not sent again",
            auto_reply.pk,
            described,
        )
        return finish_unknown(auto_reply, chat, described)
    if error.retryable and auto_reply.attempts < settings.TASK_MAX_ATTEMPTS:
        with transaction.atomic():
            retry_later(send_auto_reply, auto_reply.pk, attempt=auto_reply.attempts)
            finish(auto_reply, AutoReplyState.RETRYING, error=described)
        logger.warning(
            "Auto-reply %s failed (attempt %s), retrying later: %s",
            auto_reply.pk,
            auto_reply.attempts,
            described,
        )
        return AutoReplyState.RETRYING
    logger.warning("Auto-reply %s was not sent: %s", auto_reply.pk, described)
    return finish(auto_reply, AutoReplyState.FAILED, reply=chat, error=described)
