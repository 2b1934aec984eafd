"""Sends whose outcome is unknown, settled by their status webhooks.

Every send carries `biz_opaque_callback_data` naming it (payloads.with_callback). When
a worker dies after the request went out, no chat is recorded, and the message's
statuses are kept aside with that callback data (statuses.record_statuses). The owner
of such a send (a campaign recipient, campaigns/settlement.py) asks here: for each
callback data whose statuses came, the chat is recorded from them (WhatsApp's message
id, `accepted`, then moved forward by those statuses, with message.sent and
message.status.update as for any send). A send whose statuses never came stays unknown.
"""

from dataclasses import dataclass
from typing import Any

from accounts.models import Organization
from contacts.models import Contact
from sending.models import Chat, ChatStatus, ChatStatusEvent, ChatType
from sending.services.chats import SendFailed, record_accepted


@dataclass(frozen=True)
class UnknownSend:
    """A send whose outcome is unknown: the callback data it carried, its recipient and
    what its chat keeps (as the send would have recorded it)."""

    callback_data: str
    contact: Contact
    metadata: dict[str, Any]


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


def settle_unknown_sends(
    *, organization: Organization, sends: list[UnknownSend]
) -> dict[str, Chat]:
    """The chats recorded for the sends whose statuses came, by callback data; the others
    are left out (still unknown). Idempotent: a message id already recorded is not
    recorded again (that send is left out)."""
    if not sends:
        return {}
    wam_ids = sends_with_statuses(
        organization=organization, callback_data=[send.callback_data for send in sends]
    )
    if not wam_ids:
        return {}
    recorded = set(
        Chat.objects.filter(organization=organization, wam_id__in=wam_ids.values()).values_list(
            "wam_id", flat=True
        )
    )
    chats: dict[str, Chat] = {}
    for send in sends:
        wam_id = wam_ids.get(send.callback_data)
        if wam_id is None or wam_id in recorded or send.callback_data in chats:
            continue
        recorded.add(wam_id)
        chats[send.callback_data] = Chat(
            organization=organization,
            contact=send.contact,
            type=ChatType.OUTBOUND,
            wam_id=wam_id,
            metadata=send.metadata,
            status=ChatStatus.ACCEPTED,
        )
    outcomes = record_accepted(list(chats.values()))  # takes the kept statuses too
    return {
        data: outcome
        for data, outcome in zip(chats, outcomes, strict=True)
        if not isinstance(outcome, SendFailed)
    }
