"""The number's messaging limit: at most so many unique new recipients in a rolling 24
hours (WhatsApp's tier: TIER_250 is 250, ... TIER_UNLIMITED none).

A recipient is new when the organization sent its number nothing (no outbound chat, no
campaign message) in the last 24 hours. Each new one a campaign sends to is written down
(NewConversation) before its message leaves, in a transaction that holds the
organization's SendPace row, the lock every sender of the number takes its turns under:
so two workers never both spend the last places. They are written down while the
number has no known limit too, so that the conversations of the last 24 hours count
when WhatsApp reports one. The new recipients over the limit wait (`waiting`); the
minutely task (`wake_waiting`) gives them back to the senders as the window frees
places.
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import Organization
from business_numbers.selectors import sending_health
from campaigns.models import (
    Campaign,
    CampaignStatus,
    NewConversation,
    Recipient,
    RecipientStatus,
    SendPace,
)
from contacts.models import Contact
from sending.selectors import messaged_since

logger = logging.getLogger(__name__)

WINDOW = timedelta(hours=24)
OVER_LIMIT = "Over the number's messaging limit: it goes when the rolling 24 hours allow."


def admit(
    *,
    organization: Organization,
    number_id: int,
    limit: int | None,
    claimed: list[Recipient],
    contacts: dict[str, Contact],
) -> list[Recipient]:
    """Of a batch's claimed recipients, those that may go now; the new ones over the
    limit are made `waiting` (their claim released). With no limit (unknown or
    unlimited) all go, and the new ones are written down all the same."""
    if not claimed:
        return claimed
    going: list[Recipient] = []
    waiting: list[Recipient] = []
    with transaction.atomic():
        SendPace.objects.select_for_update().filter(number_id=number_id).first()
        now = timezone.now()
        since = now - WINDOW
        phones = [recipient.phone for recipient in claimed]
        known = messaged_since(
            number_id=number_id,
            contact_ids=[contacts[phone].pk for phone in phones],
            since=since,
        )
        recent = NewConversation.objects.filter(number_id=number_id, started_at__gte=since)
        started = set(recent.filter(phone__in=phones).values_list("phone", flat=True))
        places = len(claimed) if limit is None else limit - recent.count()
        new: list[NewConversation] = []
        for recipient in claimed:
            if contacts[recipient.phone].pk in known or recipient.phone in started:
                going.append(recipient)
            elif len(new) < places:
                started.add(recipient.phone)
                new.append(
                    NewConversation(
                        organization=organization,
                        number_id=number_id,
                        phone=recipient.phone,
                        started_at=now,
                    )
                )
                going.append(recipient)
            else:
                waiting.append(recipient)
        NewConversation.objects.bulk_create(new)
        if waiting:
            Recipient.objects.filter(
                pk__in=[recipient.pk for recipient in waiting],
                status=RecipientStatus.SENDING,
                claimed_at=waiting[0].claimed_at,
            ).update(
                status=RecipientStatus.WAITING, error=OVER_LIMIT, claimed_by="", claimed_at=None
            )
            # Cancelled meanwhile: they stay unsent.
            Recipient.objects.filter(
                pk__in=[recipient.pk for recipient in waiting],
                status=RecipientStatus.WAITING,
                campaign__status=CampaignStatus.CANCELLED,
            ).update(status=RecipientStatus.SKIPPED)
    if waiting:
        logger.info(
            "Organization %s: %s recipient(s) wait for the messaging limit (%s a day)",
            organization.pk,
            len(waiting),
            limit,
        )
    return going


def places_left(*, number_id: int, limit: int | None) -> int | None:
    """New recipients the number may still message now; None without a limit."""
    if limit is None:
        return None
    since = timezone.now() - WINDOW
    used = NewConversation.objects.filter(number_id=number_id, started_at__gte=since).count()
    return max(0, limit - used)


def wake_waiting() -> int:
    """The waiting recipients of running campaigns that the window now allows, given back
    to the senders (`pending`), oldest first; the record of conversations older than the
    window forgotten. How many were woken."""
    NewConversation.objects.filter(started_at__lt=timezone.now() - WINDOW).delete()
    woken = 0
    campaigns = Campaign.objects.filter(
        status=CampaignStatus.RUNNING,
        pk__in=Recipient.objects.filter(status=RecipientStatus.WAITING).values("campaign_id"),
    ).select_related("organization", "number")
    for campaign in campaigns:
        health = sending_health(number=campaign.number, template=campaign.template)
        places = places_left(number_id=campaign.number_id, limit=health.new_conversations_limit)
        waiting = Recipient.objects.filter(campaign=campaign, status=RecipientStatus.WAITING)
        if places is not None:
            if places == 0:
                continue
            waiting = Recipient.objects.filter(
                pk__in=list(waiting.order_by("id").values_list("pk", flat=True)[:places]),
                status=RecipientStatus.WAITING,
            )
        woken += waiting.update(status=RecipientStatus.PENDING, error="")
    return woken
