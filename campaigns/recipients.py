"""A campaign's recipients: fixed when it starts (one row per distinct number), each
claim's end recorded, the claims of dead workers marked unknown, and the campaign
completed once none is left to send."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus
from campaigns.settlement import settle_marked
from contacts.models import Contact
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.worker.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

OPTED_OUT = "The contact opted out of campaigns."
UNKNOWN = (
    "The worker sending it stopped during the send: WhatsApp may or may not have it, so "
    "it is not sent again (retry-unknown sends it again)."
)
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
        campaign_id=campaign_id,
        status__in=[RecipientStatus.PENDING, RecipientStatus.SENDING, RecipientStatus.WAITING],
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


def finish_all(recipients: list[Recipient], status: str, *, error: str) -> None:
    """The same outcome for several claimed recipients of one batch, in one statement."""
    if recipients:
        Recipient.objects.filter(
            pk__in=[recipient.pk for recipient in recipients],
            status=RecipientStatus.SENDING,
            claimed_at=recipients[0].claimed_at,
        ).update(status=status, error=error)


def finish(recipient: Recipient, status: str, *, error: str = "", **values) -> None:
    """Record a claimed recipient's outcome. Conditional on the claim still being this
    one (or marked unknown meanwhile by a sender that thought its worker dead: the
    owner knows better); a pending one is released for another try (give_back)."""
    if status == RecipientStatus.PENDING:
        give_back([recipient], error=error, **values)
        return
    owned(recipient.claimed_at, [recipient.pk]).update(status=status, error=error, **values)


def give_back(recipients: list[Recipient], *, error: str = "", **values) -> None:
    """Claimed recipients not sent, pending again for another try, in one transaction:
    one statement per batch claimed, and one that skips those of a campaign cancelled
    meanwhile (they stay unsent)."""
    if not recipients:
        return
    claims: dict = {}
    for recipient in recipients:
        claims.setdefault(recipient.claimed_at, []).append(recipient.pk)
    with transaction.atomic():
        for claimed_at, pks in claims.items():
            owned(claimed_at, pks).update(
                status=RecipientStatus.PENDING,
                error=error,
                claimed_by="",
                claimed_at=None,
                **values,
            )
        Recipient.objects.filter(
            pk__in=[recipient.pk for recipient in recipients],
            status=RecipientStatus.PENDING,
            campaign__status=CampaignStatus.CANCELLED,
        ).update(status=RecipientStatus.SKIPPED)


def owned(claimed_at, pks: list[int]):
    """These recipients while still under the claim made at `claimed_at`."""
    return Recipient.objects.filter(
        pk__in=pks,
        status__in=[RecipientStatus.SENDING, RecipientStatus.UNKNOWN],
        claimed_at=claimed_at,
    )


def mark_dead_claims_unknown(*, campaign_id: int, worker_id: str) -> int:
    """Claims of workers no longer alive become `unknown`: they may have been sent."""
    timeout = timedelta(seconds=settings.TASK_WORKER_TIMEOUT)
    now = timezone.now()
    alive = WorkerHeartbeat.objects.filter(last_seen__gte=now - timeout).values("worker_id")
    # A claim that old cannot be a send still under way, whoever made it.
    ancient = now - timeout - timedelta(seconds=settings.WHATSAPP_TIMEOUT) * 2
    dead = (
        Recipient.objects.filter(campaign_id=campaign_id, status=RecipientStatus.SENDING)
        .exclude(claimed_by=worker_id)
        .filter(~Q(claimed_by__in=alive) | Q(claimed_at__lt=ancient))
    )
    ids = list(dead.values_list("pk", flat=True))
    if not ids:
        return 0
    with transaction.atomic():
        marked = Recipient.objects.filter(pk__in=ids, status=RecipientStatus.SENDING).update(
            status=RecipientStatus.UNKNOWN, error=UNKNOWN
        )
        if marked:
            # Their statuses may have come already, kept aside with their callback data.
            unknown = Recipient.objects.filter(pk__in=ids, status=RecipientStatus.UNKNOWN)
            settle_marked(list(unknown.select_related("campaign__organization")))
    if marked:
        logger.error(
            "Campaign %s: %s recipient(s) were being sent by a worker that stopped; their "
            "outcome is unknown and they are not sent again",
            campaign_id,
            marked,
        )
    return marked
