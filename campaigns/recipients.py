"""A campaign's recipients: fixed when it starts (one row per distinct number), and the
campaign completed once none is left to send."""

import logging

from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus
from contacts.models import Contact
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone

logger = logging.getLogger(__name__)

OPTED_OUT = "The contact opted out of campaigns."
# Looked up in chunks: SQLite limits the parameters of one statement.
CHUNK = 500


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
