"""Writes to campaigns: create (and start, or schedule), cancel.

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
from django.utils import timezone

from accounts.models import Organization
from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus
from campaigns.tasks import start_campaign, start_scheduled_campaign
from contacts.models import ContactGroup
from sending.services import check_template

logger = logging.getLogger(__name__)

CANCELLED = "The campaign was cancelled before this recipient's turn."


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
) -> Campaign:
    """A campaign, started now (its recipients fixed) or scheduled for `scheduled_at`.
    A template the organization has synced is checked first: the parameter count it
    takes (a ValidationError naming template.components)."""
    check_template(organization=organization, template=template)
    with transaction.atomic():
        campaign = Campaign.objects.create(
            organization=organization,
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
    """Cancel a scheduled or running campaign; a finished one is left as it is.

    Returns only when no further send will start: the recipients still pending are
    skipped in the same transaction that marks it cancelled (a sender's claim is
    conditional on both, campaigns/sender.py), then the sends already under way are
    waited for, at most WHATSAPP_TIMEOUT and a little more.
    """
    now = timezone.now()
    with transaction.atomic():
        changed = Campaign.objects.filter(
            pk=campaign.pk, status__in=[CampaignStatus.SCHEDULED, CampaignStatus.RUNNING]
        ).update(status=CampaignStatus.CANCELLED, finished_at=now, updated_at=now)
        if changed:
            Recipient.objects.filter(campaign=campaign, status=RecipientStatus.PENDING).update(
                status=RecipientStatus.SKIPPED, error=CANCELLED
            )
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
