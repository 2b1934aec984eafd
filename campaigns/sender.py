"""Sending a running campaign: each recipient at most once, at the number's pace.

(Over 400 lines: the send loop, its pacing and its pause are one algorithm, read in order.)

A sender task (campaigns/tasks.py) works in batches, each about TICK seconds of the
rate, and keeps about LOOKAHEAD seconds of turns ahead of the clock:

0. read the number's health and the template's status (one query, at most every
   HEALTH_EVERY seconds): a template no longer
   approved, a quality RED or a restricted account pauses the campaign instead
   (`paused_reason`); the sends of this sender not yet gone are stopped and given back
   (`pending`), those at the channel answered, then the campaign is `paused`;
1. claim a batch of pending recipients: one conditional UPDATE moves them to `sending`,
   naming this worker, only while they are pending and the campaign running (so
   neither another sender nor a cancel or pause can meet them half-way);
2. find or create their contacts (one look-up, one insert for the new ones); skip those
   that opted out; hold back the new ones over the number's messaging limit
   (campaigns/limits.py, `waiting`); take a turn for each of the rest
   (campaigns/pacing.py);
3. hand each message to a thread that only talks to the network: it sleeps until the
   message's turn and calls the channel (unless the sender was told to stop meanwhile),
   with biz_opaque_callback_data naming the recipient and attempt
   (campaigns/settlement.py); a message about to be written later than its turn allows
   is not written, and the task takes it a fresh turn (campaigns/pacing.py);
4. record the outcomes of the messages answered so far, together: the chats of those
   accepted in one insert, their recipients `sent` in one update. The rare outcomes go
   one by one: `failed` with the error, back to `pending` when Graph throttled the
   number (it was not sent), `unknown` when the channel may have taken it without our
   knowing (no answer, or the answer not recorded).

A sender claims no faster than its sends keep their turns (`Ceiling`), and the senders
of one worker process share one budget of sends under way (`SendsUnderWay`): a process
that cannot keep a campaign's rate sends at what it can, rather than missing more turns
the more it takes.

All database work is done by the task's own thread; the sending threads hold no
connection. A worker killed before step 4 leaves those claims `sending`. WhatsApp has no
idempotency key, so they are never sent again: any sender that finds a claim of a
worker no longer alive (no heartbeat for TASK_WORKER_TIMEOUT) marks it `unknown` and
reports it. A sender holds at most AHEAD_BATCHES batches claimed and not yet gone, plus
those its threads have at the channel, so that is what a crash can leave unknown.
"""

import logging
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import Organization
from business_numbers.gateway import ChannelNotConfigured, GatewayError, NotWritten
from business_numbers.selectors import SendingHealth, sending_health
from campaigns import queries
from campaigns.limits import admit
from campaigns.models import Campaign, CampaignStatus, PausedReason, Recipient, RecipientStatus
from campaigns.pacing import (
    READY,
    THROTTLING_CODES,
    on_time,
    slow_down,
    take_turns,
    too_late,
    wait_for,
)
from campaigns.recipients import (
    OPTED_OUT,
    complete_if_done,
    finish,
    finish_all,
    give_back,
    mark_dead_claims_unknown,
)
from campaigns.settlement import callback_data
from contacts.models import Contact
from contacts.opt_outs import set_opted_out
from contacts.services import contacts_for_phones
from sending.models import Chat
from sending.services import Outcome, TemplateSend, prepare_template_send, record_answers

logger = logging.getLogger(__name__)

# The channel's "user stopped marketing messages": the contact opts out.
OPTED_OUT_CODE = 131050
# Seconds of the rate one batch covers, and how far ahead of the clock turns are taken.
TICK = 0.1
LOOKAHEAD = 0.25
# Batches claimed and not yet gone, at most: when the sending threads fall behind their
# turns, claiming waits for them rather than piling up claims a crash would leave unknown.
AHEAD_BATCHES = 4
# Seconds one send is expected to take at most, to size the sending threads to the rate.
SEND_SECONDS = 0.4
# A sender task sends for this long, then hands over to a new task: a worker told to stop
# (SIGTERM) finishes its running tasks first, and a campaign must not hold it for hours.
SLICE_SECONDS = 20.0
# The number's health is read before a batch at most this often (seconds): a pause comes
# within it, and a fast campaign's batches do not each pay the query.
HEALTH_EVERY = 0.5
# A send a stopped sender did not make (the campaign paused or cancelled before its turn).
NOT_SENT = object()
# A send not made because its turn had gone by when it was to be written: it takes
# another (campaigns/pacing.py).
LATE = object()


@dataclass
class Sender:
    """One sender task's view of its campaign, read once per slice."""

    campaign: Campaign
    worker_id: str
    template_send: TemplateSend | None = None
    problem: str = ""  # why nothing can be sent (the channel or the template), if so
    # New recipients in a rolling 24 hours (the number's messaging limit), read per batch.
    limit: int | None = None
    # Set when the campaign stops running: the sends whose turn has not come do not go.
    stop: threading.Event = field(default_factory=threading.Event)
    # Sends that missed their turns (the process stalled) and took fresh ones.
    late: int = 0
    # Set once the slice handed the rest over: a send that misses its turn then goes
    # back to the recipients waiting, for the next sender, rather than taking a fresh
    # turn here (an overloaded process's slices would otherwise never end, each with
    # its threads, while new ones start every SLICE_SECONDS).
    handed_over: bool = False
    answered: int = 0  # sends the sending threads are done with
    missed: int = 0  # of which missed their turns, given back or sent at fresh ones
    held: int = 0  # room this sender holds in `sends_under_way`

    def give_room(self, size: int) -> None:
        sends_under_way.release(size)
        self.held -= size

    @property
    def organization(self) -> Organization:
        return self.campaign.organization

    def prepare(self) -> None:
        """The channel and what each chat keeps, once per sender rather than per message
        (a template changed since the campaign was created fails every send alike)."""
        try:
            self.template_send = prepare_template_send(
                organization=self.organization,
                number=self.campaign.number,
                template=self.campaign.template,
            )
        except ChannelNotConfigured as error:
            self.problem = error.detail
        except ValidationError as error:
            self.problem = "; ".join(error.messages)


@dataclass
class Send:
    """A claimed recipient on its way: its turn, and the sending thread's future (the
    channel's answer, or the GatewayError it gave)."""

    recipient: Recipient
    contact: Contact
    future: Future
    left: threading.Event  # set when the channel is called


class SendsUnderWay:
    """The campaign sends under way in this process, across all its sender tasks, at
    most `most()`: a sender reserves room for a batch before claiming it, and gives the
    room back as its sends are recorded (or not sent).

    Without it an overloaded worker (its sends answered late, a slice still draining
    when the next one starts) started each new slice's sends on top of the old ones',
    and got slower the more it took on, until sends waited past WHATSAPP_TIMEOUT and
    ended `unknown`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    @staticmethod
    def most() -> int:
        # As many as the connections the process keeps to Graph (the gateway's pool).
        return max(1, settings.CAMPAIGN_THREADS * max(1, settings.CAMPAIGN_SENDERS))

    def reserve(self, size: int) -> bool:
        with self.lock:
            if self.count + size > self.most():
                return False
            self.count += size
            return True

    def release(self, size: int) -> None:
        with self.lock:
            self.count -= size


sends_under_way = SendsUnderWay()


@dataclass
class Ceiling:
    """How many messages a second this sender claims at most: the campaign's rate while
    its sends keep their turns; cut by a third (at most once a second, down to one a
    second) when more than MISSED_SHARE of those answered since missed them, and
    raised again by a tenth of the rate each second they do not.

    A process short of CPU (or of the GIL) starts its sends late; each one late costs a
    fresh turn and more work, so taking turns at the full rate regardless made it miss
    more, and a campaign at 500 a second fell to 25 for most of a minute. Claiming
    only what the process keeps, it sends at what it can."""

    MISSED_SHARE = 0.05

    rate: int
    per_second: float = 0.0
    changed_at: float = -math.inf  # monotonic
    next_claim_at: float = -math.inf
    seen: tuple[int, int] = (0, 0)  # the sender's (answered, missed) at the last change

    def __post_init__(self) -> None:
        self.per_second = float(self.rate)

    def may_claim(self, now: float) -> bool:
        return now >= self.next_claim_at

    def claimed(self, now: float, count: int) -> None:
        self.next_claim_at = now + count / self.per_second

    def follow(self, now: float, answered: int, missed: int) -> None:
        """After the sends answered so far were recorded: the sender's counts of sends
        answered (or not made) and of those that missed their turns."""
        if now - self.changed_at < 1.0:
            return
        answered_since, missed_since = answered - self.seen[0], missed - self.seen[1]
        if missed_since > self.MISSED_SHARE * answered_since:
            self.per_second = max(1.0, self.per_second * 2 / 3)
        elif self.per_second < self.rate:
            self.per_second = min(float(self.rate), self.per_second + self.rate / 10)
        elif answered_since < self.rate:
            return  # (at the rate: the counts go on until there is something to judge)
        self.changed_at, self.seen = now, (answered, missed)


def threads_for(rate: int) -> int:
    """Sending threads per sender task: enough for every message between its turn being
    taken and its answer, at `rate`."""
    senders = max(1, settings.CAMPAIGN_SENDERS)
    wanted = math.ceil(rate * (SEND_SECONDS + LOOKAHEAD + TICK) / senders)
    return max(1, min(settings.CAMPAIGN_THREADS, wanted))


def batch_size(rate: int) -> int:
    return max(1, math.ceil(rate * TICK))


def run_campaign(
    *,
    campaign_id: int,
    worker_id: str,
    next_sender: Callable[[Campaign], object],
    others_claiming: Callable[[], bool] = lambda: False,
) -> str | None:
    """One sender task's work on a campaign; the campaign's status when it ends (None
    when it was deleted meanwhile).
    `next_sender(campaign)` enqueues the sender task that takes over the rest;
    `others_claiming()`, asked once at the end, records this sender as past its claims
    and says whether another sender task of the campaign may still claim."""
    campaign = Campaign.objects.select_related("organization").filter(pk=campaign_id).first()
    if campaign is None or campaign.status != CampaignStatus.RUNNING:
        return campaign.status if campaign else "gone"
    mark_dead_claims_unknown(campaign_id=campaign_id, worker_id=worker_id)
    send_until_done(
        campaign=campaign,
        worker_id=worker_id,
        until=time.monotonic() + SLICE_SECONDS,
        hand_over=lambda: hand_over(campaign, next_sender),
    )
    if end_of_sender(campaign, next_sender, others_claiming):
        return CampaignStatus.RUNNING
    mark_dead_claims_unknown(campaign_id=campaign_id, worker_id=worker_id)
    complete_if_done(campaign_id=campaign_id)
    return Campaign.objects.filter(pk=campaign_id).values_list("status", flat=True).first()


def end_of_sender(
    campaign: Campaign,
    next_sender: Callable[[Campaign], object],
    others_claiming: Callable[[], bool],
) -> bool:
    """Whether recipients are still pending, now that this sender claims no more; if so,
    a new sender for them unless another one may still claim them. Recipients released
    meanwhile (throttled, a fault before the channel, a late send given back after the
    hand-over) therefore go again, and an overloaded worker's slices, which gave some
    back nearly every time, do not each start a line of senders of their own.

    With the campaign's row held: of two senders ending together, the later one sees
    the earlier one past its claims, and sends what is left."""
    with transaction.atomic():
        if not Campaign.objects.select_for_update().filter(pk=campaign.pk).exists():
            return False
        if not still_pending(campaign.pk):
            others_claiming()  # (recorded all the same)
            return False
        if not others_claiming():
            next_sender(campaign)
        return True


def pause_reason(health: SendingHealth) -> str:
    """Why a campaign may not send now, or "" (the order: the account, the number, the
    template)."""
    if health.account_restricted:
        return PausedReason.ACCOUNT_RESTRICTED
    if health.quality_red:
        return PausedReason.QUALITY_RED
    if not health.template_approved:
        return PausedReason.TEMPLATE_NOT_APPROVED
    return ""


def pause(campaign_id: int, reason: str) -> bool:
    """A running campaign paused (conditional: a cancel or another pause comes first)."""
    paused = Campaign.objects.filter(pk=campaign_id, status=CampaignStatus.RUNNING).update(
        status=CampaignStatus.PAUSED, paused_reason=reason, updated_at=timezone.now()
    )
    if paused:
        logger.warning("Campaign %s paused: %s", campaign_id, reason)
    return bool(paused)


def may_send(sender: Sender) -> str:
    """Before each batch: the pause reason, if any (one query); the limit read too."""
    health = sending_health(number=sender.campaign.number, template=sender.campaign.template)
    sender.limit = health.new_conversations_limit
    return pause_reason(health)


def hand_over(campaign: Campaign, next_sender: Callable[[Campaign], object]) -> bool:
    """At the end of a slice, the rest to a new sender task (any worker's), enqueued
    while this one still finishes its sends under way, so the pace has no gap. A crash
    before this one ends runs it again too: one more sender, and claims keep them apart."""
    if not still_pending(campaign.pk):
        return False
    next_sender(campaign)
    return True


def still_pending(campaign_id: int) -> bool:
    return Recipient.objects.filter(
        campaign_id=campaign_id,
        status=RecipientStatus.PENDING,
        campaign__status=CampaignStatus.RUNNING,
    ).exists()


def send_until_done(
    *,
    campaign: Campaign,
    worker_id: str,
    until: float | None = None,
    hand_over: Callable[[], bool] = lambda: False,
) -> None:
    """Claim and send batches until none is pending (or it is cancelled), or the
    monotonic clock passes `until`, when `hand_over()` is asked to pass the rest on;
    every send started is recorded before it returns."""
    sender = Sender(campaign=campaign, worker_id=worker_id)
    sender.prepare()
    rate, threads = campaign.rate, threads_for(campaign.rate)
    # Turns only for messages a thread is free to wait for: one queued behind a busy
    # thread would start after its turn, and give it up (campaigns/pacing.py).
    size = min(batch_size(rate), threads)
    under_way: list[Send] = []
    ahead_until = time.monotonic()  # this sender's turns are taken up to here
    claiming, batches, paused = True, 0, ""
    checked_at = -math.inf
    ceiling = Ceiling(rate)
    try:
        with ThreadPoolExecutor(threads, thread_name_prefix="campaign-send") as pool:
            while claiming or under_way:
                now = time.monotonic()
                if claiming and batches and until is not None and now >= until:
                    claiming = False  # (a slice sends one batch at least)
                    sender.handed_over = hand_over()
                waiting = sum(not send.left.is_set() for send in under_way)
                busy = sum(not send.future.done() for send in under_way)
                if (
                    claiming
                    and ahead_until - now < LOOKAHEAD
                    and waiting < AHEAD_BATCHES * size
                    and busy + size <= threads
                    and ceiling.may_claim(now)
                    and sends_under_way.reserve(size)
                ):
                    sender.held += size
                    if now - checked_at >= HEALTH_EVERY:
                        paused, checked_at = may_send(sender), now
                    if paused:
                        sender.give_room(size)
                        claiming = False
                        sender.stop.set()  # the sends whose turn has not come stay unsent
                        continue
                    claimed = claim_batch(sender, size)
                    batches += 1
                    if claimed:
                        ceiling.claimed(now, len(claimed))
                        sends, last_turn = dispatch(sender, claimed, pool)
                        sender.give_room(size - len(sends))  # (skipped, held back, failed)
                        under_way += sends
                        if last_turn is not None:
                            ahead = (last_turn - timezone.now()).total_seconds()
                            ahead_until = max(ahead_until, time.monotonic() + ahead)
                        continue  # perhaps another batch is wanted already
                    sender.give_room(size)
                    claiming = False
                    if not still_running(campaign.pk):  # paused or cancelled by someone else
                        sender.stop.set()
                under_way = record_answered(sender, under_way, pool)
                ceiling.follow(time.monotonic(), sender.answered, sender.missed)
                if under_way or claiming:
                    time.sleep(TICK / 2)
    finally:
        sender.give_room(sender.held)  # (what an error left reserved)
    if sender.late:
        logger.info(
            "Campaign %s: %s sends missed their turns and took later ones",
            campaign.uuid,
            sender.late,
        )
    # Paused once every send under way is answered: after that, none reaches the channel.
    if paused:
        pause(campaign.pk, paused)


def still_running(campaign_id: int) -> bool:
    return Campaign.objects.filter(pk=campaign_id, status=CampaignStatus.RUNNING).exists()


def claim_batch(sender: Sender, size: int) -> list[Recipient]:
    """Up to `size` pending recipients, in order, now `sending` under this worker; none
    when none is left or the campaign stopped running (campaigns/queries.py)."""
    return queries.claim_recipients(
        campaign_id=sender.campaign.pk, worker_id=sender.worker_id, size=size
    )


def dispatch(
    sender: Sender, claimed: list[Recipient], pool: ThreadPoolExecutor
) -> tuple[list[Send], datetime | None]:
    """Start the batch's messages: the contacts found or made, the opted-out skipped, a
    turn each; the sends under way and the last turn taken."""
    if sender.problem:
        finish_all(claimed, RecipientStatus.FAILED, error=sender.problem)
        return [], None
    contacts = contacts_for_phones(
        organization=sender.organization, phones=[r.phone for r in claimed]
    )
    opted_out = [r for r in claimed if contacts[r.phone].opted_out]
    finish_all(opted_out, RecipientStatus.SKIPPED, error=OPTED_OUT)
    going = [r for r in claimed if not contacts[r.phone].opted_out]
    going = admit(
        organization=sender.organization,
        number_id=sender.campaign.number_id,
        limit=sender.limit,
        claimed=going,
        contacts=contacts,
    )
    if not going:
        return [], None
    return send_at_turns(sender, [(r, contacts[r.phone]) for r in going], pool)


def send_at_turns(
    sender: Sender, messages: list[tuple[Recipient, Contact]], pool: ThreadPoolExecutor
) -> tuple[list[Send], datetime]:
    """A turn each for `messages` (claimed, admitted), each handed to a sending thread;
    the sends under way and the last turn taken."""
    turns = take_turns(
        number_id=sender.campaign.number_id, rate=sender.campaign.rate, count=len(messages)
    )
    sends = []
    for (recipient, contact), turn in zip(messages, turns, strict=True):
        left = threading.Event()
        future = pool.submit(
            call_channel,
            cast(TemplateSend, sender.template_send),  # prepared: there is no problem
            contact,
            turn,
            left,
            sender.stop,
            callback_data(recipient),
        )
        sends.append(Send(recipient=recipient, contact=contact, future=future, left=left))
    return sends, turns[-1]


def call_channel(
    template_send: TemplateSend,
    contact: Contact,
    turn: datetime,
    left: threading.Event,
    stop: threading.Event,
    callback: str,
) -> dict | GatewayError | object:
    """In a sending thread, no database: wait for the turn, then call the channel;
    NOT_SENT when the sender was stopped meanwhile, LATE when the turn went by before
    the request could be written (nothing was)."""
    wait_for(turn - READY)
    if stop.is_set():
        return NOT_SENT
    if too_late(turn):  # (before the request is made ready: it would not go)
        return LATE
    may_write = on_time(turn)
    left.set()  # from here a failure may have reached the channel, unless NotWritten
    try:
        return template_send.call(contact, callback_data=callback, may_write=may_write)
    except NotWritten:
        left.clear()
        return LATE


def record_answered(sender: Sender, under_way: list[Send], pool: ThreadPoolExecutor) -> list[Send]:
    """Record the outcomes of the sends answered so far, and send those that came too
    late for their turns at fresh ones; those still under way."""
    done: list[Send] = []
    waiting: list[Send] = []
    for send in under_way:
        (done if send.future.done() else waiting).append(send)
    if not done:
        return waiting
    sender.answered += len(done)
    answered: list[Send] = []
    late: list[tuple[Recipient, Contact]] = []
    unsent: list[Recipient] = []  # given back to the recipients waiting
    for send in done:
        try:
            result = send.future.result()
            if result is LATE:
                sender.missed += 1
            if result is NOT_SENT or (
                result is LATE and (sender.stop.is_set() or sender.handed_over)
            ):
                unsent.append(send.recipient)
                continue
            if result is LATE:
                late.append((send.recipient, send.contact))
                continue
        except Exception as error:  # a fault of ours, around the call
            if send.left.is_set():
                logger.exception("Campaign recipient %s: the outcome is unknown", send.recipient.pk)
                finish(send.recipient, RecipientStatus.UNKNOWN, error=str(error)[:1000])
            else:
                logger.exception(
                    "Campaign recipient %s not sent; it waits again", send.recipient.pk
                )
                finish(send.recipient, RecipientStatus.PENDING, error=str(error)[:1000])
            continue
        answered.append(send)
    give_back(unsent)
    outcomes = record_answers(
        cast(TemplateSend, sender.template_send),  # prepared: sends went out
        [(send.contact, send.future.result()) for send in answered],
        callback_data=[callback_data(send.recipient) for send in answered],
    )
    sent: list[Recipient] = []
    for send, outcome in zip(answered, outcomes, strict=True):
        if not outcome.accepted:
            failed(sender, send.recipient, outcome)
        elif outcome.chat is None:
            logger.error(
                "Campaign %s, recipient %s: sent (message id %s) but not recorded",
                sender.campaign.uuid,
                send.recipient.pk,
                outcome.wam_id,
            )
            finish(
                send.recipient, RecipientStatus.UNKNOWN, error="The outcome could not be recorded."
            )
        else:
            recipient = send.recipient
            recipient.status, recipient.error = RecipientStatus.SENT, ""
            recipient.chat_id, recipient.contact_id = outcome.chat.pk, send.contact.pk
            sent.append(recipient)
    record_sent(sent)
    sender.give_room(len(done) - len(late))
    if late:
        sender.late += len(late)
        waiting += send_at_turns(sender, late, pool)[0]
    return waiting


def record_sent(sent: list[Recipient]) -> None:
    """The accepted sends' recipients `sent`, in one statement per batch (a batch's
    claims share one moment; campaigns/queries.py)."""
    batches: dict[datetime | None, list[tuple[int, int | None, int | None]]] = {}
    for recipient in sent:
        batches.setdefault(recipient.claimed_at, []).append(
            (recipient.pk, recipient.chat_id, recipient.contact_id)
        )
    for claimed_at, rows in batches.items():
        queries.mark_sent(claimed_at=claimed_at, sent=rows)


def failed(sender: Sender, recipient: Recipient, outcome: Outcome) -> None:
    """A send the channel did not accept (or whose answer never came), its failed chat
    recorded: the recipient's end, or its next try when Graph only throttled it."""
    # Not accepted: its error, and the failed chat recorded.
    error, chat = cast(GatewayError, outcome.error), cast(Chat, outcome.chat)
    chat_id, contact_id = chat.pk, outcome.contact.pk
    described = f"{error.message}" + (f" (code {error.code})" if error.code else "")
    if error.code == OPTED_OUT_CODE:
        set_opted_out(contact_id=contact_id, opted_out=True)
    if error.may_have_been_sent:
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
        slow_down(number_id=sender.campaign.number_id)
        logger.warning("Campaign %s throttled by WhatsApp (%s)", sender.campaign.uuid, described)
        finish(recipient, RecipientStatus.PENDING, error=described, contact_id=contact_id)
        return
    finish(
        recipient, RecipientStatus.FAILED, error=described, chat_id=chat_id, contact_id=contact_id
    )
