"""Campaigns and their recipients as the API shows them, for the API and the admin."""

from typing import TYPE_CHECKING, Any, TypedDict

from campaigns.models import Campaign, Recipient
from campaigns.selectors import recipient_error, recipient_status
from messaging_project.core.formats import iso_datetime

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class CampaignCounts(TypedDict):
    """The counts campaigns.selectors annotates a campaign with."""

    total: int
    pending: int
    sent: int
    delivered: int
    read: int
    failed: int
    skipped: int
    unknown: int
    waiting: int


def campaign_data(campaign: "WithAnnotations[Campaign, CampaignCounts]") -> dict[str, Any]:
    """A campaign with its counts (annotated by campaigns.selectors)."""
    return {
        "uuid": str(campaign.uuid),
        "name": campaign.name,
        "status": campaign.status,
        "paused_reason": campaign.paused_reason or None,
        "total": campaign.total,
        "pending": campaign.pending,
        "sent": campaign.sent,
        "delivered": campaign.delivered,
        "read": campaign.read,
        "failed": campaign.failed,
        "skipped": campaign.skipped,
        "unknown": campaign.unknown,
        "waiting": campaign.waiting,
        "rate": campaign.rate,
        "scheduled_at": iso_datetime(campaign.scheduled_at),
        "created_at": iso_datetime(campaign.created_at),
        "started_at": iso_datetime(campaign.started_at),
        "finished_at": iso_datetime(campaign.finished_at),
    }


def recipient_data(recipient: Recipient) -> dict[str, Any]:
    return {
        "phone": recipient.phone,
        "contact_uuid": str(recipient.contact.uuid) if recipient.contact is not None else None,
        "status": recipient_status(recipient),
        "chat_uuid": str(recipient.chat.uuid) if recipient.chat is not None else None,
        "error": recipient_error(recipient),
    }
