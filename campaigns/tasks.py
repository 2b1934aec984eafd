"""Campaigns' background work: starting a campaign (now, or by a worker at its
`scheduled_at`), its sender tasks, and the minutely look for campaigns left without one
(and for recipients the messaging limit let wait).

Every step is idempotent: starting is conditional on the campaign still being scheduled,
and a sender only sends what it claims (campaigns/sender.py), so a task run twice, or
two senders at once, send each recipient at most once.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import task
from django_tasks_db.models import DBTaskResult

from campaigns.limits import wake_waiting
from campaigns.models import Campaign, CampaignStatus, EndedSender, Recipient, RecipientStatus
from campaigns.pacing import ensure_pace
from campaigns.recipients import fixed_recipients
from campaigns.sender import run_campaign
from messaging_project.worker.priorities import BULK
from messaging_project.worker.schedule import every
from messaging_project.worker.turns import enqueue_in_turn

logger = logging.getLogger(__name__)


@task(takes_context=True, priority=BULK)
def send_campaign(context, campaign_id: int) -> str | None:
    """Send the campaign's pending recipients at its pace; its status when done. A slice
    of the work: the rest is handed to the next sender task, enqueued here."""
    worker_ids = context.task_result.worker_ids
    worker_id = worker_ids[-1] if worker_ids else "inline"
    return run_campaign(
        campaign_id=campaign_id,
        worker_id=worker_id,
        next_sender=enqueue_sender,
        others_claiming=lambda: end_sender(campaign_id, context.task_result.id),
    )


def senders(campaign_id: int):
    """The campaign's sender tasks waiting or running."""
    return DBTaskResult.objects.filter(
        task_path=send_campaign.module_path,
        status__in=["READY", "RUNNING"],
        args_kwargs__args__0=campaign_id,
    )


def end_sender(campaign_id: int, task_id) -> bool:
    """This sender task past its last claim (recorded), and whether another sender of
    the campaign may still claim: one waiting, or running and not yet at its end.
    Called with the campaign's row held, so two ends take turns, and the later one sees
    the earlier recorded (campaigns/sender.py, `end_of_sender`)."""
    EndedSender.objects.get_or_create(task_id=task_id, defaults={"campaign_id": campaign_id})
    active = list(senders(campaign_id).values_list("id", flat=True))
    ended = EndedSender.objects.filter(campaign_id=campaign_id)
    ended.exclude(task_id__in=active).delete()  # (those whose task is over)
    return bool(set(active) - set(ended.values_list("task_id", flat=True)))


def enqueue_sender(campaign: Campaign):
    """A sender task for the campaign, in its organization's turn (worker/turns.py): one
    organization's ten campaigns take turns with another's one."""
    return enqueue_in_turn(send_campaign, campaign.organization_id, campaign.pk)


@task()
def start_scheduled_campaign(campaign_id: int) -> bool:
    """Fix the recipients and start sending, at the campaign's `scheduled_at`."""
    return start_campaign(campaign_id=campaign_id)


@every(timedelta(minutes=1))
@task()
def resume_campaigns() -> int:
    """Running campaigns that no sender task is left for (every one failed): a new one
    each, which sends the rest and marks dead workers' claims unknown; first, the
    recipients waiting for the messaging limit that the rolling 24 hours now allow go
    back to `pending`. How many campaigns were resumed."""
    wake_waiting()
    forget_ended_senders()
    return resume_stalled_campaigns()


def forget_ended_senders() -> int:
    """The records of senders past their claims whose tasks are over: a sender's end
    forgets those of its campaign (end_sender), but the last one's stays until this."""
    active = DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).values("id")
    deleted, _ = EndedSender.objects.exclude(task_id__in=active).delete()
    return deleted


def start_campaign(*, campaign_id: int) -> bool:
    """Fix the recipients of a scheduled campaign and start sending; False when it is not
    scheduled (started already, or cancelled)."""
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
            start_senders(campaign)
    logger.info("Campaign %s started with %s recipients", campaign.uuid, len(recipients))
    return True


def start_senders(campaign: Campaign) -> None:
    """The campaign's sender tasks, enqueued in the caller's transaction."""
    ensure_pace(number_id=campaign.number_id)
    for _ in range(max(1, settings.CAMPAIGN_SENDERS)):
        enqueue_sender(campaign)


def resume_stalled_campaigns() -> int:
    """A sender task for each running campaign that has none waiting or running."""
    resumed = 0
    for campaign in Campaign.objects.filter(status=CampaignStatus.RUNNING).only(
        "pk", "organization_id"
    ):
        campaign_id = campaign.pk
        with transaction.atomic():
            # Locked, so that two workers' schedulers resume it once.
            if not (
                Campaign.objects.select_for_update()
                .filter(pk=campaign_id, status=CampaignStatus.RUNNING)
                .exists()
            ):
                continue
            if not senders(campaign_id).exists():
                enqueue_sender(campaign)
                resumed += 1
                logger.warning("Campaign %s had no sender left; one more started", campaign_id)
    return resumed
