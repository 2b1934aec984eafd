"""Reads of the numbers for the apps above: a number named by a send's `from`, and a
number's health and a template's status as WhatsApp last reported them."""

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, Subquery

from accounts.models import Organization
from business_numbers.models import MessageTemplate, Number, numbers_of

NOT_DIGITS = re.compile(r"\D")


def find_number(organization: Organization, name: str) -> Number | None:
    """The live number of the organization that `name` names: its uuid, its phone number
    id, or its display number (written with or without `+`, spaces or dashes)."""
    name = str(name).strip()
    numbers = numbers_of(organization)
    try:
        wanted = uuid.UUID(name)
    except ValueError:
        wanted = None
    for number in numbers:
        if number.uuid == wanted or (number.phone_number_id and number.phone_number_id == name):
            return number
    digits = NOT_DIGITS.sub("", name)
    if digits:
        for number in numbers:
            shown = NOT_DIGITS.sub("", number.display_phone_number)
            if shown and shown == digits:
                return number
    return None


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


def sending_health(*, number: Number, template: dict[str, Any]) -> SendingHealth:
    """The number's health and the template's status, fresh from the database (one query)."""
    known = MessageTemplate.objects.live().filter(
        number=OuterRef("pk"),
        name=str(template.get("name", "")),
        language=str((template.get("language") or {}).get("code", "")),
    )
    row: Mapping[str, Any] = (
        Number.objects.filter(pk=number.pk)
        .annotate(template_status=Subquery(known.values("status")[:1]))
        .values("quality_rating", "messaging_limit", "account_status", "template_status")
        .first()
    ) or {}
    return SendingHealth(
        quality_rating=row.get("quality_rating") or "UNKNOWN",
        messaging_limit=row.get("messaging_limit") or "",
        account_status=row.get("account_status") or "",
        template_status=row.get("template_status") or "",
    )
