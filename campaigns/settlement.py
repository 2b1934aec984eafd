"""Recipients whose outcome is unknown, settled by their status webhooks.

Each campaign message carries `biz_opaque_callback_data` naming its recipient and the
attempt (`callback_data`). When the worker sending it died, the recipient is `unknown`
and its statuses are kept aside by sending with that callback data. Sending tells us of
them as they come (`on_kept_statuses`, registered in CampaignsConfig.ready), and the
claims marked unknown look for statuses that came first
(recipients.mark_dead_claims_unknown): sending records the chat from the statuses
(sending/services/settlement.py), and the recipient is `sent`, following that chat.
A worker may also die after recording the chat and before marking its recipient sent:
then the chat's statuses name the recipient (`on_chat_statuses`, and the same look when
claims are marked unknown), and it follows that chat.
"""

import logging
from collections import defaultdict
from typing import Any

from django.core.exceptions import ValidationError

from accounts.models import Organization
from business_numbers.gateway import ChannelNotConfigured
from campaigns import queries
from campaigns.models import Campaign, Recipient, RecipientStatus
from contacts.services import contacts_for_phones
from sending.models import Chat
from sending.recorded import StatusesKept, StatusesRecorded
from sending.services import (
    UnknownSend,
    chats_with_statuses,
    hold_callback_data,
    prepare_template_send,
    read_holding_callback_data,
    settle_unknown_sends,
)

logger = logging.getLogger(__name__)

PREFIX = "campaign-recipient:"


def callback_data(recipient: Recipient) -> str:
    """What a recipient's message carries: the recipient and its attempt (its claim's)."""
    return f"{PREFIX}{recipient.pk}:{recipient.attempts}"


def parse(data: str) -> tuple[int, int] | None:
    """(recipient id, attempt) of a campaign's callback data; None for any other."""
    if not data.startswith(PREFIX):
        return None
    try:
        pk, attempt = data[len(PREFIX) :].split(":")
        return int(pk), int(attempt)
    except ValueError:
        return None


def on_kept_statuses(record: StatusesKept) -> None:
    """Statuses that came with no chat: the unknown recipients they name are settled."""
    organization, updates = record.organization, record.updates
    named = {u.callback_data: key for u in updates if (key := parse(u.callback_data))}
    if not named:
        return
    wanted = set(named.values())
    # Held before looking, as settle_marked does: a recipient marked unknown meanwhile is
    # seen here or sees these statuses there. Nearly always none is unknown (a campaign's
    # status that came before its chat was recorded): looked for in the round trip that
    # holds them.
    unknown = read_holding_callback_data(
        organization.pk,
        set(named),
        queries.unknown_named(organization.pk, {pk for pk, _ in wanted}),
    )
    if not unknown:
        return
    recipients = Recipient.objects.filter(
        pk__in=[pk for (pk,) in unknown], status=RecipientStatus.UNKNOWN
    ).select_related("campaign")
    settle(organization, [r for r in recipients if (r.pk, r.attempts) in wanted])


def on_chat_statuses(record: StatusesRecorded) -> None:
    """Statuses of recorded chats that name an unknown recipient: its worker recorded the
    chat and died before marking the recipient sent. Sent now, following that chat."""
    organization, chats = record.organization, record.chats
    updates = [update for update in record.updates if update.callback_data]
    named: dict[tuple[int, int], Chat] = {}
    for update in updates:
        key = parse(update.callback_data)
        if key is not None:
            named.setdefault(key, chats[update.wam_id])
    if not named:
        return
    # Nearly always none is unknown: looked for in the round trip that holds them.
    unknown = read_holding_callback_data(
        organization.pk,
        {update.callback_data for update in updates},
        queries.unknown_named(organization.pk, {pk for pk, _ in named}),
    )
    if not unknown:
        return
    recipients = Recipient.objects.filter(
        pk__in=[pk for (pk,) in unknown], status=RecipientStatus.UNKNOWN
    )
    mark_sent([r for r in recipients if (r.pk, r.attempts) in named], named)


def mark_sent(recipients: list[Recipient], chats: dict[tuple[int, int], Any]) -> int:
    """These unknown recipients `sent`, each following its chat (`chats` by recipient id
    and attempt); how many."""
    for recipient in recipients:
        chat = chats[(recipient.pk, recipient.attempts)]
        recipient.status, recipient.error = RecipientStatus.SENT, ""
        recipient.chat_id, recipient.contact_id = chat.pk, chat.contact_id
    done = Recipient.objects.filter(status=RecipientStatus.UNKNOWN).bulk_update(
        recipients, ["status", "error", "chat", "contact"]
    )
    if done:
        logger.info("%s campaign recipient(s) settled by their recorded chats", done)
    return done


def settle_marked(recipients: list[Recipient]) -> int:
    """Recipients just marked unknown (each with its campaign and organization), in the
    transaction that marked them: those whose statuses came first are settled. Their
    callback data is held first, as the webhook keeping a status holds it
    (on_kept_statuses), so that a status committed meanwhile is not missed by both."""
    if not recipients:
        return 0
    organization = recipients[0].campaign.organization
    hold_callback_data(organization.pk, [callback_data(recipient) for recipient in recipients])
    # A chat recorded before its worker died, whose statuses came: sent, following it.
    recorded = chats_with_statuses(
        organization=organization, callback_data=[callback_data(r) for r in recipients]
    )
    followed = [r for r in recipients if callback_data(r) in recorded]
    by_key = {(r.pk, r.attempts): recorded[callback_data(r)] for r in followed}
    settled = mark_sent(followed, by_key) if followed else 0
    rest = [r for r in recipients if callback_data(r) not in recorded]
    return settled + settle(organization, rest)


def settle(organization: Organization, recipients: list[Recipient]) -> int:
    """Of these unknown recipients (each with its campaign), those whose statuses came are
    `sent` with the chat recorded from them; how many."""
    if not recipients:
        return 0
    by_campaign: dict[int, list[Recipient]] = defaultdict(list)
    for recipient in recipients:
        by_campaign[recipient.campaign_id].append(recipient)
    contacts = contacts_for_phones(
        organization=organization, phones=[recipient.phone for recipient in recipients]
    )
    settled = 0
    for group in by_campaign.values():
        metadata = chat_metadata(group[0].campaign)
        sends = [
            UnknownSend(callback_data(r), contacts[r.phone], metadata, group[0].campaign.number)
            for r in group
            if r.phone in contacts
        ]
        chats = settle_unknown_sends(organization=organization, sends=sends)
        done = []
        for recipient in group:
            chat = chats.get(callback_data(recipient))
            if chat is None:
                continue
            recipient.status, recipient.error = RecipientStatus.SENT, ""
            recipient.chat_id, recipient.contact_id = chat.pk, chat.contact_id
            done.append(recipient)
        settled += Recipient.objects.filter(status=RecipientStatus.UNKNOWN).bulk_update(
            done, ["status", "error", "chat", "contact"]
        )
    if settled:
        logger.info("%s campaign recipient(s) settled by their status webhooks", settled)
    return settled


def chat_metadata(campaign: Campaign) -> dict:
    """What the chat of a campaign's message keeps, as the sender would have recorded it."""
    try:
        return prepare_template_send(
            organization=campaign.organization, number=campaign.number, template=campaign.template
        ).metadata
    except (ChannelNotConfigured, ValidationError):
        return {"type": "template", "template": campaign.template}
