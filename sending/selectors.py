"""Reads of sending for the apps above it (campaigns): the number's health and a
template's status as WhatsApp last reported them, and who was messaged lately."""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import OuterRef, Subquery

from accounts.models import Organization
from sending.models import Channel, Chat, ChatType, MessageTemplate

# Template statuses a send may go with: approved, or not known locally (never synced).
SENDABLE_TEMPLATE_STATUSES = frozenset({"", "APPROVED"})
# Account statuses in which WhatsApp limits or refuses the number's messages.
RESTRICTED_ACCOUNT_STATUSES = frozenset({"RESTRICTED", "BANNED", "DISABLED", "FLAGGED"})
TIER = re.compile(r"^TIER_(\d+)(K?)$")


@dataclass(frozen=True)
class SendingHealth:
    quality_rating: str  # GREEN, YELLOW, RED, UNKNOWN
    messaging_limit: str  # TIER_250 ... TIER_UNLIMITED, "" when not known
    account_status: str  # ACTIVE, RESTRICTED, BANNED, ... "" when not known
    template_status: str  # the local template's status, "" when not known locally

    @property
    def template_approved(self) -> bool:
        return self.template_status.upper() in SENDABLE_TEMPLATE_STATUSES

    @property
    def quality_red(self) -> bool:
        return self.quality_rating.upper() == "RED"

    @property
    def account_restricted(self) -> bool:
        return self.account_status.upper() in RESTRICTED_ACCOUNT_STATUSES

    @property
    def new_conversations_limit(self) -> int | None:
        """Unique new recipients the number may message in a rolling 24 hours; None
        when unlimited or not known."""
        return tier_limit(self.messaging_limit)


def tier_limit(tier: str) -> int | None:
    """TIER_250 -> 250, TIER_1K -> 1000, ...; None for TIER_UNLIMITED and anything unknown."""
    match = TIER.match((tier or "").upper())
    if match is None:
        return None
    return int(match.group(1)) * (1000 if match.group(2) else 1)


def sending_health(*, organization: Organization, template: dict[str, Any]) -> SendingHealth:
    """The number's health and the template's status, fresh from the database (one query)."""
    channel = Channel.objects.filter(organization=OuterRef("pk"))
    known = MessageTemplate.objects.live().filter(
        organization=OuterRef("pk"),
        name=str(template.get("name", "")),
        language=str((template.get("language") or {}).get("code", "")),
    )
    row = (
        Organization.objects.filter(pk=organization.pk)
        .annotate(
            quality_rating=Subquery(channel.values("quality_rating")[:1]),
            messaging_limit=Subquery(channel.values("messaging_limit")[:1]),
            account_status=Subquery(channel.values("account_status")[:1]),
            template_status=Subquery(known.values("status")[:1]),
        )
        .values("quality_rating", "messaging_limit", "account_status", "template_status")
        .first()
    ) or {}
    return SendingHealth(
        quality_rating=row.get("quality_rating") or "UNKNOWN",
        messaging_limit=row.get("messaging_limit") or "",
        account_status=row.get("account_status") or "",
        template_status=row.get("template_status") or "",
    )


def messaged_since(
    *, organization: Organization, contact_ids: Iterable[int], since: datetime
) -> set[int]:
    """Of these contacts, those the organization sent any message since `since`."""
    ids = list(contact_ids)
    if not ids:
        return set()
    return set(
        Chat.objects.filter(
            organization=organization,
            type=ChatType.OUTBOUND,
            contact_id__in=ids,
            created_at__gte=since,
        ).values_list("contact_id", flat=True)
    )
