"""Writes to campaigns: create (and start, or schedule), cancel, resume a paused one,
send again the recipients whose outcome stayed unknown.

The API and the admin come through here. A campaign's recipients are fixed when it
starts, one row each, in the same transaction that marks it running and enqueues its
sender tasks (campaigns/tasks.py, campaigns/sender.py).
"""

import logging
import time
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import Organization
from business_numbers.models import Number
from business_numbers.selectors import sending_health
from business_numbers.services import check_template
from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus
from campaigns.sender import pause_reason
from campaigns.settlement import settle_marked
from campaigns.tasks import start_campaign, start_scheduled_campaign, start_senders
from contacts.models import ContactGroup
from sending.services import route

logger = logging.getLogger(__name__)

CANCELLED = "The campaign was cancelled before this recipient's turn."
# A recipient whose outcome is unknown is sent again only after this long with no status.
RETRY_UNKNOWN_AFTER = timedelta(minutes=10)
RETRIED = "Sent again by retry-unknown: the first message may also arrive."
# Why a paused campaign cannot resume yet, by pause reason (campaigns.sender.pause_reason).
STILL_PAUSED = {
    "template_not_approved": "The campaign's template is not approved on WhatsApp yet.",
    "quality_red": "The number's quality rating is still RED.",
    "account_restricted": "The WhatsApp account is still restricted or banned.",
}


class CampaignConflict(Exception):
    """The campaign is not in a state that allows the change; the message says why."""


NUMBER_IN_USE = "A campaign is running or waiting on this number: cancel it or let it finish."


def number_in_use(number: Number) -> str | None:
    """Why a number cannot be deleted: a campaign still sends from it (the deletion guard
    campaigns register in ready())."""
    unfinished = [CampaignStatus.SCHEDULED, CampaignStatus.RUNNING, CampaignStatus.PAUSED]
    if Campaign.objects.live().filter(number=number, status__in=unfinished).exists():
        return NUMBER_IN_USE
    return None


def create_campaign(
    *,
    organization: Organization,
    name: str,
    template: dict[str, Any],
    contact_group: ContactGroup | None = None,
    phones: list[str] | None = None,
    scheduled_at: datetime | None = None,
    rate: int | None = None,
    created_by: int = 0,
    sender: Number | str | None = None,
) -> Campaign:
    """A campaign, started now (its recipients fixed) or scheduled for `scheduled_at`,
    from the number `sender` names (docs/numbers.md; an unknown one is a ValidationError
    on `from`), else the default number. A template the number has synced is checked
    first: the parameter count it takes (a ValidationError naming template.components)."""
    # The number `from` names, else the default: there is no contact to have written to.
    number = route(organization, sender=sender).number
    check_template(number=number, template=template)
    with transaction.atomic():
        campaign = Campaign.objects.create(
            organization=organization,
            number=number,
            name=name,
            template=template,
            contact_group=contact_group,
            phones=phones,
            rate=rate or settings.CAMPAIGN_RATE,
            scheduled_at=scheduled_at,
            created_by=created_by,
        )
        if scheduled_at is None:
            start_campaign(campaign_id=campaign.pk)
            campaign.refresh_from_db()
        else:
            # The worker runs it when due (its run_after), whichever worker is up then.
            start_scheduled_campaign.using(run_after=scheduled_at).enqueue(campaign.pk)
    return campaign


def cancel_campaign(*, campaign: Campaign) -> None:
    """Cancel a scheduled, running or paused campaign; a finished one is left as it is.

    Returns only when no further send will start: the recipients still pending are
    skipped in the same transaction that marks it cancelled (a sender's claim is
    conditional on both, campaigns/sender.py), then the sends already under way are
    waited for, at most WHATSAPP_TIMEOUT and a little more.
    """
    now = timezone.now()
    unfinished = [CampaignStatus.SCHEDULED, CampaignStatus.RUNNING, CampaignStatus.PAUSED]
    with transaction.atomic():
        changed = Campaign.objects.filter(pk=campaign.pk, status__in=unfinished).update(
            status=CampaignStatus.CANCELLED, finished_at=now, updated_at=now
        )
        if changed:
            Recipient.objects.filter(
                campaign=campaign,
                status__in=[RecipientStatus.PENDING, RecipientStatus.WAITING],
            ).update(status=RecipientStatus.SKIPPED, error=CANCELLED)
    if changed:
        logger.info("Campaign %s cancelled", campaign.uuid)
    wait_for_sends_under_way(campaign_id=campaign.pk)
    campaign.refresh_from_db()


def wait_for_sends_under_way(*, campaign_id: int) -> None:
    # A send is bounded by WHATSAPP_TIMEOUT; a claim older than that and a margin is a
    # dead worker's (it becomes `unknown`), not a send that could still start.
    margin = settings.WHATSAPP_TIMEOUT + 5
    deadline = time.monotonic() + margin
    while time.monotonic() < deadline:
        recent = timezone.now() - timedelta(seconds=margin)
        if not Recipient.objects.filter(
            campaign_id=campaign_id, status=RecipientStatus.SENDING, claimed_at__gte=recent
        ).exists():
            return
        time.sleep(0.05)


def resume_campaign(*, campaign: Campaign) -> None:
    """Continue a paused campaign once its cause is gone: its senders start again. A
    running campaign is left as it is (resuming twice is harmless). CampaignConflict
    when it is neither, or while the cause of the pause lasts."""
    health = sending_health(number=campaign.number, template=campaign.template)
    reason = pause_reason(health)
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if locked.status == CampaignStatus.RUNNING:
            return
        if locked.status != CampaignStatus.PAUSED:
            raise CampaignConflict(
                f"Only a paused campaign can be resumed; this one is {locked.status}."
            )
        if reason:
            raise CampaignConflict(f"The campaign stays paused: {STILL_PAUSED.get(reason, reason)}")
        locked.status, locked.paused_reason = CampaignStatus.RUNNING, ""
        locked.save(update_fields=["status", "paused_reason", "updated_at"])
        start_senders(locked)
    logger.info("Campaign %s resumed", campaign.uuid)
    campaign.refresh_from_db()


def retry_unknown(*, campaign: Campaign) -> int:
    """Send again, once, the recipients still `unknown` RETRY_UNKNOWN_AFTER after their
    send with no status come for it (a status that came settles it instead:
    campaigns/settlement.py). WhatsApp may have the first message, so it may arrive
    twice. A completed campaign runs again for them. Under the campaign's row lock, so
    calls at the same time send each once. How many were given back to the senders.
    CampaignConflict for a scheduled or cancelled campaign."""
    cutoff = timezone.now() - RETRY_UNKNOWN_AFTER
    with transaction.atomic():
        locked = (
            Campaign.objects.select_for_update().select_related("organization").get(pk=campaign.pk)
        )
        if locked.status in (CampaignStatus.SCHEDULED, CampaignStatus.CANCELLED):
            raise CampaignConflict(
                f"Only a started campaign's recipients can be retried; this one is {locked.status}."
            )
        unknown = Recipient.objects.filter(campaign=locked, status=RecipientStatus.UNKNOWN).filter(
            Q(claimed_at__lt=cutoff) | Q(claimed_at__isnull=True)
        )
        due = list(unknown.select_related("campaign"))
        for recipient in due:
            recipient.campaign = locked
        settle_marked(due)  # their statuses came after all: not sent again
        retried = Recipient.objects.filter(
            pk__in=[recipient.pk for recipient in due], status=RecipientStatus.UNKNOWN
        ).update(status=RecipientStatus.PENDING, claimed_by="", claimed_at=None, error=RETRIED)
        if retried and locked.status == CampaignStatus.COMPLETED:
            locked.status, locked.finished_at = CampaignStatus.RUNNING, None
            locked.save(update_fields=["status", "finished_at", "updated_at"])
        if retried and locked.status == CampaignStatus.RUNNING:
            start_senders(locked)
    if retried:
        logger.warning("Campaign %s: %s unknown recipient(s) sent again", campaign.uuid, retried)
    campaign.refresh_from_db()
    return retried
