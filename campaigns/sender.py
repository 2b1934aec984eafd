"""Sending a running campaign: each recipient at most once, at the number's pace.

A sender task (campaigns/tasks.py) runs one or more threads; each repeats:

1. claim the next pending recipient: one conditional UPDATE moves it to `sending`,
   naming this worker, only while it is pending and the campaign running (so neither
   another sender nor a cancel can meet it half-way);
2. skip it if its contact opted out meanwhile; else send the template through the send
   service (the chat is recorded as for /api/send/template), which waits for the
   number's next turn (campaigns/pacing.py) just before the request leaves, so the pace
   is kept where it counts, at the channel;
3. record the outcome: `sent` with its chat, `failed` with the error, back to `pending`
   when Graph throttled the number (it was not sent), `unknown` when the channel may have
   taken it without our knowing (no answer, or the answer not recorded).

A worker killed during step 2 leaves its claims `sending`. WhatsApp has no idempotency
key, so they are never sent again: any sender that finds a claim of a worker no longer
alive (no heartbeat for TASK_WORKER_TIMEOUT) marks it `unknown` and reports it.
"""

import logging
import math
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Organization
from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus
from campaigns.pacing import THROTTLING_CODES, slow_down, wait_for_turn
from campaigns.services import OPTED_OUT, complete_if_done
from contacts.models import Contact
from contacts.services import set_opted_out
from messaging_project.api.models import WorkerHeartbeat
from sending.gateway import ChannelNotConfigured, GatewayError
from sending.models import MessageTemplate
from sending.services import SendFailed, SendNotRecorded, send_template, synced_template
from sending.tasks import outcome_unknown  # the auto-replies' rule: no answer is unknown

logger = logging.getLogger(__name__)

# The channel's "user stopped marketing messages": the contact opts out.
OPTED_OUT_CODE = 131050
# Seconds one send is expected to take at most, to size the threads to the rate.
SEND_SECONDS = 0.4
# A sender task sends for this long, then hands over to a new task: a worker told to stop
# (SIGTERM) finishes its running tasks first, and a campaign must not hold it for hours.
SLICE_SECONDS = 20.0


@dataclass
class Sender:
    campaign: Campaign
    worker_id: str

    @property
    def organization(self) -> Organization:
        return self.campaign.organization

    @cached_property
    def known_template(self) -> MessageTemplate | None:
        """The synced template the campaign sends, read once per sender rather than per
        message (a sender lives for one slice, SLICE_SECONDS)."""
        return synced_template(self.organization, self.campaign.template)


def threads_for(rate: int) -> int:
    """Threads per sender task: enough sends in flight to keep up with `rate`."""
    senders = max(1, settings.CAMPAIGN_SENDERS)
    wanted = math.ceil(rate * SEND_SECONDS / senders)
    return max(1, min(settings.CAMPAIGN_THREADS, wanted))


def run_campaign(*, campaign_id: int, worker_id: str) -> str:
    """One sender task's work on a campaign; the campaign's status when it ends."""
    campaign = Campaign.objects.select_related("organization").filter(pk=campaign_id).first()
    if campaign is None or campaign.status != CampaignStatus.RUNNING:
        return campaign.status if campaign else "gone"
    mark_dead_claims_unknown(campaign_id=campaign_id, worker_id=worker_id)
    threads = threads_for(campaign.rate)
    until = time.monotonic() + SLICE_SECONDS
    work = {"campaign_id": campaign_id, "worker_id": worker_id, "until": until}
    if threads == 1:
        send_until_done(**work)
    else:
        pool = [
            threading.Thread(
                target=in_own_connection, kwargs=work, name=f"campaign-{campaign_id}-{n}"
            )
            for n in range(threads)
        ]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    if still_pending(campaign_id):
        # The slice is over: the rest goes to a new task (any worker's). Enqueued before
        # this one ends, so a crash in between leaves this one to be run again instead.
        from campaigns.tasks import send_campaign

        send_campaign.enqueue(campaign_id)
        return CampaignStatus.RUNNING
    mark_dead_claims_unknown(campaign_id=campaign_id, worker_id=worker_id)
    complete_if_done(campaign_id=campaign_id)
    return Campaign.objects.filter(pk=campaign_id).values_list("status", flat=True).first()


def in_own_connection(**kwargs) -> None:
    try:
        send_until_done(**kwargs)
    except Exception:
        logger.exception("A campaign sending thread stopped")
    finally:
        connection.close()


def still_pending(campaign_id: int) -> bool:
    return Recipient.objects.filter(
        campaign_id=campaign_id,
        status=RecipientStatus.PENDING,
        campaign__status=CampaignStatus.RUNNING,
    ).exists()


def send_until_done(*, campaign_id: int, worker_id: str, until: float | None = None) -> None:
    """Claim and send recipients one by one until none is pending (or it is cancelled),
    or the monotonic clock passes `until`."""
    campaign = Campaign.objects.select_related("organization").get(pk=campaign_id)
    sender = Sender(campaign=campaign, worker_id=worker_id)
    while True:
        recipient = claim_next(sender)
        if recipient is None:
            return
        send_one(sender, recipient)
        if until is not None and time.monotonic() >= until:
            return


def claim_next(sender: Sender) -> Recipient | None:
    """The next pending recipient, now `sending` under this worker; None when none is left
    or the campaign stopped running."""
    if connection.vendor == "postgresql":
        return claim_in_one_statement(sender)
    campaign_id = sender.campaign.pk
    while True:
        with transaction.atomic():
            candidate = (
                Recipient.objects.select_for_update(skip_locked=True)
                .filter(campaign_id=campaign_id, status=RecipientStatus.PENDING)
                .order_by("id")
                .values_list("pk", flat=True)
                .first()
            )
            if candidate is None:
                return None
            claimed = (
                Recipient.objects.filter(pk=candidate, status=RecipientStatus.PENDING)
                .filter(campaign__status=CampaignStatus.RUNNING)
                .update(
                    status=RecipientStatus.SENDING,
                    claimed_by=sender.worker_id[:255],
                    claimed_at=timezone.now(),
                    attempts=F("attempts") + 1,
                )
            )
        if claimed:
            return Recipient.objects.get(pk=candidate)
        if not Campaign.objects.filter(pk=campaign_id, status=CampaignStatus.RUNNING).exists():
            return None
        # Another sender took it between the two statements: the next one.


def claim_in_one_statement(sender: Sender) -> Recipient | None:
    """The same claim as one UPDATE ... RETURNING (one round trip, on the hot path): the
    first pending recipient not locked by another sender, while the campaign runs, with
    `opted_out` (its contact's) set."""
    recipients = connection.ops.quote_name(Recipient._meta.db_table)
    campaigns = connection.ops.quote_name(Campaign._meta.db_table)
    contacts = connection.ops.quote_name(Contact._meta.db_table)
    claimed = Recipient.objects.raw(
        f"UPDATE {recipients} SET status = %s, claimed_by = %s, claimed_at = %s, "
        f"attempts = attempts + 1 "
        f"WHERE id = (SELECT id FROM {recipients} WHERE campaign_id = %s AND status = %s "
        f"ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) "
        f"AND EXISTS (SELECT 1 FROM {campaigns} WHERE id = %s AND status = %s) "
        # Whether the number's contact opted out, read in the same statement.
        f"RETURNING *, EXISTS (SELECT 1 FROM {contacts} WHERE organization_id = %s "
        f"AND phone = {recipients}.phone AND opted_out AND deleted_at IS NULL) AS opted_out",
        [
            RecipientStatus.SENDING,
            sender.worker_id[:255],
            timezone.now(),
            sender.campaign.pk,
            RecipientStatus.PENDING,
            sender.campaign.pk,
            CampaignStatus.RUNNING,
            sender.organization.pk,
        ],
    )
    return next(iter(claimed), None)


def send_one(sender: Sender, recipient: Recipient) -> None:
    organization = sender.organization
    opted_out = getattr(recipient, "opted_out", None)  # read with the claim on PostgreSQL
    if opted_out is None:
        opted_out = is_opted_out(organization.pk, recipient.phone)
    if opted_out:
        finish(recipient, RecipientStatus.SKIPPED, error=OPTED_OUT)
        return
    reached = threading.Event()  # set once the channel is about to be called

    def when_its_turn() -> None:
        # Last thing before the request leaves, so that the pace is the channel's.
        wait_for_turn(organization_id=organization.pk, rate=sender.campaign.rate)
        reached.set()

    try:
        result = send_template(
            organization=organization,
            phone=recipient.phone,
            template=sender.campaign.template,
            known_template=sender.known_template,
            before_send=when_its_turn,
        )
    except SendFailed as failure:
        failed(
            sender,
            recipient,
            failure.error,
            chat_id=failure.chat.pk,
            contact_id=failure.chat.contact_id,
        )
        if failure.error.code == OPTED_OUT_CODE:
            set_opted_out(contact_id=failure.chat.contact_id, opted_out=True)
        return
    except ChannelNotConfigured as error:
        finish(recipient, RecipientStatus.FAILED, error=error.detail)
        return
    except SendNotRecorded as lost:
        logger.error(
            "Campaign %s, recipient %s: sent (message id %s) but not recorded",
            sender.campaign.uuid,
            recipient.pk,
            lost.wam_id,
        )
        finish(recipient, RecipientStatus.UNKNOWN, error="The outcome could not be recorded.")
        return
    except Exception as error:
        # Before the channel was called nothing left: the recipient waits for a retry.
        if not reached.is_set():
            logger.exception("Campaign recipient %s not sent; it waits again", recipient.pk)
            finish(recipient, RecipientStatus.PENDING, error=str(error)[:1000])
            return
        logger.exception("Campaign recipient %s: the outcome is unknown", recipient.pk)
        finish(recipient, RecipientStatus.UNKNOWN, error=str(error)[:1000])
        return
    finish(
        recipient, RecipientStatus.SENT, chat_id=result.chat.pk, contact_id=result.chat.contact_id
    )


def is_opted_out(organization_id: int, phone: str) -> bool:
    return (
        Contact.objects.live()
        .filter(organization_id=organization_id, phone=phone, opted_out=True)
        .exists()
    )


def failed(
    sender: Sender, recipient: Recipient, error: GatewayError, *, chat_id: int, contact_id: int
) -> None:
    described = f"{error.message}" + (f" (code {error.code})" if error.code else "")
    if outcome_unknown(error):
        logger.error(
            "Campaign %s, recipient %s: no answer from WhatsApp (%s); not sent again",
            sender.campaign.uuid,
            recipient.pk,
            described,
        )
        finish(
            recipient,
            RecipientStatus.UNKNOWN,
            error=described,
            chat_id=chat_id,
            contact_id=contact_id,
        )
        return
    if error.code in THROTTLING_CODES and recipient.attempts < settings.TASK_MAX_ATTEMPTS:
        # Graph refused it for the pace: it was not sent. Everyone waits, then it goes again.
        slow_down(organization_id=sender.organization.pk)
        logger.warning("Campaign %s throttled by WhatsApp (%s)", sender.campaign.uuid, described)
        finish(recipient, RecipientStatus.PENDING, error=described, contact_id=contact_id)
        return
    finish(
        recipient, RecipientStatus.FAILED, error=described, chat_id=chat_id, contact_id=contact_id
    )


def finish(recipient: Recipient, status: str, *, error: str = "", **values) -> None:
    """Record a claimed recipient's outcome. Conditional on the claim still being this
    one (or marked unknown meanwhile by a sender that thought its worker dead: the
    owner knows better); a pending one is released for another try, a cancelled
    campaign's skipped."""
    if status == RecipientStatus.PENDING:
        values.update(claimed_by="", claimed_at=None)
    owned = Recipient.objects.filter(
        pk=recipient.pk,
        status__in=[RecipientStatus.SENDING, RecipientStatus.UNKNOWN],
        claimed_at=recipient.claimed_at,
    )
    if status != RecipientStatus.PENDING:  # one statement: no transaction of its own
        owned.update(status=status, error=error, **values)
        return
    with transaction.atomic():
        owned.update(status=status, error=error, **values)
        # Cancelled meanwhile: it stays unsent.
        Recipient.objects.filter(
            pk=recipient.pk,
            status=RecipientStatus.PENDING,
            campaign__status=CampaignStatus.CANCELLED,
        ).update(status=RecipientStatus.SKIPPED)


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
    marked = dead.update(
        status=RecipientStatus.UNKNOWN,
        error="The worker sending it stopped during the send: WhatsApp may or may not "
        "have it, so it is not sent again.",
    )
    if marked:
        logger.error(
            "Campaign %s: %s recipient(s) were being sent by a worker that stopped; their "
            "outcome is unknown and they are not sent again",
            campaign_id,
            marked,
        )
    return marked
