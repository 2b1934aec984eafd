"""Writes to campaigns: create (and start, or schedule), start, cancel.

The API, the admin and the tasks come through here. A campaign's recipients are fixed
when it starts, one row each, in the same transaction that marks it running and enqueues
its sender tasks (campaigns/tasks.py, campaigns/sender.py).
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
from campaigns.pacing import ensure_pace
from contacts.models import Contact, ContactGroup
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone

logger = logging.getLogger(__name__)

OPTED_OUT = "The contact opted out of campaigns."
CANCELLED = "The campaign was cancelled before this recipient's turn."
# Looked up in chunks: SQLite limits the parameters of one statement.
CHUNK = 500


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
    """A campaign, started now (its recipients fixed) or scheduled for `scheduled_at`."""
    from campaigns.tasks import start_scheduled_campaign

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


def start_campaign(*, campaign_id: int) -> bool:
    """Fix the recipients of a scheduled campaign and start sending; False when it is not
    scheduled (started already, or cancelled)."""
    from campaigns.tasks import send_campaign

    with transaction.atomic():
        campaign = (
            Campaign.objects.live()
            .select_for_update()
            .filter(pk=campaign_id, status=CampaignStatus.SCHEDULED)
            .first()
        )
        if campaign is None:
            return False
        recipients = fixed_recipients(campaign)
        Recipient.objects.bulk_create(recipients, batch_size=1000)
        now = timezone.now()
        campaign.status = CampaignStatus.RUNNING
        campaign.started_at = now
        if not any(r.status == RecipientStatus.PENDING for r in recipients):
            campaign.status = CampaignStatus.COMPLETED
            campaign.finished_at = now
        campaign.save(update_fields=["status", "started_at", "finished_at", "updated_at"])
        if campaign.status == CampaignStatus.RUNNING:
            ensure_pace(organization_id=campaign.organization_id)
            for _ in range(max(1, settings.CAMPAIGN_SENDERS)):
                send_campaign.enqueue(campaign.pk)
    logger.info("Campaign %s started with %s recipients", campaign.uuid, len(recipients))
    return True


def fixed_recipients(campaign: Campaign) -> list[Recipient]:
    """One unsaved row per distinct number: the group's live contacts, or the list's
    numbers (one that is not a number is failed, the rest go on); opted-out contacts
    are skipped."""
    if campaign.phones is None:
        group_id = campaign.contact_group_id
        contacts = (
            Contact.objects.live()
            .filter(organization_id=campaign.organization_id, contact_group_id=group_id)
            .order_by("id")
            .values_list("id", "phone", "opted_out")
            if group_id is not None
            else []
        )
        return [
            recipient(campaign, phone, contact_id=pk, opted_out=opted_out)
            for pk, phone, opted_out in contacts
        ]
    recipients: dict[str, Recipient] = {}
    for raw in campaign.phones:
        try:
            phone = normalize_phone(raw)
        except InvalidPhoneNumber as error:
            key = raw[:64]
            recipients.setdefault(
                f"invalid:{key}",
                Recipient(
                    campaign=campaign, phone=key, status=RecipientStatus.FAILED, error=str(error)
                ),
            )
            continue
        recipients.setdefault(phone, recipient(campaign, phone))
    numbers = [phone for phone in recipients if not phone.startswith("invalid:")]
    for start in range(0, len(numbers), CHUNK):
        known = Contact.objects.live().filter(
            organization_id=campaign.organization_id, phone__in=numbers[start : start + CHUNK]
        )
        for pk, phone, opted_out in known.values_list("id", "phone", "opted_out"):
            recipients[phone] = recipient(campaign, phone, contact_id=pk, opted_out=opted_out)
    return list(recipients.values())


def recipient(
    campaign: Campaign, phone: str, *, contact_id: int | None = None, opted_out: bool = False
) -> Recipient:
    if opted_out:
        return Recipient(
            campaign=campaign,
            phone=phone,
            contact_id=contact_id,
            status=RecipientStatus.SKIPPED,
            error=OPTED_OUT,
        )
    return Recipient(campaign=campaign, phone=phone, contact_id=contact_id)


def complete_if_done(*, campaign_id: int) -> bool:
    """Mark a running campaign completed once no recipient waits or is being sent."""
    unfinished = Recipient.objects.filter(
        campaign_id=campaign_id, status__in=[RecipientStatus.PENDING, RecipientStatus.SENDING]
    )
    with transaction.atomic():
        campaign = (
            Campaign.objects.select_for_update()
            .filter(pk=campaign_id, status=CampaignStatus.RUNNING)
            .first()
        )
        if campaign is None or unfinished.exists():
            return False
        now = timezone.now()
        Campaign.objects.filter(pk=campaign_id).update(
            status=CampaignStatus.COMPLETED, finished_at=now, updated_at=now
        )
    logger.info("Campaign %s completed", campaign.uuid)
    return True


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


SENDER_TASK = "campaigns.tasks.send_campaign"


def resume_stalled_campaigns() -> int:
    """A sender task for each running campaign that has none waiting or running."""
    from django_tasks_db.models import DBTaskResult

    from campaigns.tasks import send_campaign

    resumed = 0
    for campaign_id in Campaign.objects.filter(status=CampaignStatus.RUNNING).values_list(
        "pk", flat=True
    ):
        with transaction.atomic():
            # Locked, so that two workers' schedulers resume it once.
            if not (
                Campaign.objects.select_for_update()
                .filter(pk=campaign_id, status=CampaignStatus.RUNNING)
                .exists()
            ):
                continue
            senders = DBTaskResult.objects.filter(
                task_path=SENDER_TASK,
                status__in=["READY", "RUNNING"],
                args_kwargs__args__0=campaign_id,
            )
            if not senders.exists():
                send_campaign.enqueue(campaign_id)
                resumed += 1
                logger.warning("Campaign %s had no sender left; one more started", campaign_id)
    return resumed
