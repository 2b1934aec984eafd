"""Reading a Cloud API webhook's items safely: what every kind of item shares.

A piece with an unexpected shape is skipped (and logged), never a failure of the whole
delivery: these helpers read values without trusting their types, and `skip` counts
and logs an item left out.
"""

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import transaction

from accounts.models import Organization
from business_numbers.gateway.cloud_api import is_message_id
from messaging_project.core.phones import InvalidPhoneNumber

logger = logging.getLogger(__name__)


@dataclass
class WebhookSummary:
    statuses: int = 0
    messages: int = 0
    duplicates: int = 0
    skipped: int = 0
    other_number: int = 0  # changes for another phone number of the same Meta app
    updates: int = 0  # news of the account, its number or its templates (account_news.py)
    echoes: int = 0  # messages sent from the WhatsApp Business app
    imported: int = 0  # past messages of the Business app (`history`)
    preferences: int = 0  # marketing preferences applied
    replies: list[str] = field(default_factory=list)  # the auto-reply tasks enqueued (ids)
    # The changes whose statuses are queued for the worker (WHATSAPP_STATUSES_QUEUED),
    # and how many statuses they carry.
    queued_changes: list[dict] = field(default_factory=list, repr=False)
    queued: int = 0


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def message_id(item: dict) -> str:
    """The item's WhatsApp message id, if it is one we can store and look up."""
    wam_id = item["id"]
    if not is_message_id(wam_id):
        shown = wam_id[:40] if isinstance(wam_id, str) else type(wam_id).__name__
        raise ValueError(f"unusable message id {shown!r}")
    return wam_id


def skip(organization: Organization, summary: WebhookSummary, error: Exception) -> None:
    summary.skipped += 1
    logger.warning("Skipped a webhook item of organization %s: %r", organization.pk, error)


def guarded(handler, organization, item, summary, *args) -> None:
    """One malformed item is skipped and logged; the rest of the delivery goes on."""
    try:
        with transaction.atomic():
            handler(organization, item, summary, *args)
    except (KeyError, TypeError, ValueError, InvalidPhoneNumber) as error:
        skip(organization, summary, error)


def parse_timestamp(value: Any) -> datetime:
    return datetime.fromtimestamp(int(str(value)), tz=UTC)
