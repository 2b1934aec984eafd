"""Reads of campaigns: the live counts, from the recipients joined to their chats.

A sent recipient follows its chat, which the channel's status webhooks move forward
(inbound/services/webhook.py), so the counts need no hook there. The counts are a funnel:
`total = pending + sent + failed + skipped + unknown + waiting`, and read <= delivered <= sent
(`pending` includes the recipients being sent; `failed` includes messages the channel
accepted and later reported failed).
"""

from django.db.models import Count, Q, QuerySet

from campaigns.models import Campaign, Recipient, RecipientStatus
from sending.models import ChatStatus

R = RecipientStatus
COUNTS = {
    "total": Count("recipients"),
    "pending": Count("recipients", filter=Q(recipients__status__in=[R.PENDING, R.SENDING])),
    "sent": Count(
        "recipients",
        filter=Q(recipients__status=R.SENT)
        & Q(recipients__chat__status__in=[s for s in ChatStatus.values if s != "failed"]),
    ),
    "delivered": Count(
        "recipients",
        filter=Q(recipients__status=R.SENT)
        & Q(recipients__chat__status__in=[ChatStatus.DELIVERED, ChatStatus.READ]),
    ),
    "read": Count(
        "recipients", filter=Q(recipients__status=R.SENT, recipients__chat__status=ChatStatus.READ)
    ),
    "failed": Count(
        "recipients",
        filter=Q(recipients__status=R.FAILED)
        | Q(recipients__status=R.SENT, recipients__chat__status=ChatStatus.FAILED),
    ),
    "skipped": Count("recipients", filter=Q(recipients__status=R.SKIPPED)),
    "unknown": Count("recipients", filter=Q(recipients__status=R.UNKNOWN)),
    "waiting": Count("recipients", filter=Q(recipients__status=R.WAITING)),
}


def campaigns_with_counts(queryset: QuerySet[Campaign]) -> QuerySet[Campaign]:
    """Each campaign with its counts as attributes, in the same query."""
    return queryset.annotate(**COUNTS)


def campaign_recipients(campaign: Campaign) -> QuerySet[Recipient]:
    return (
        Recipient.objects.filter(campaign=campaign)
        .select_related("contact", "chat")
        .only(
            "id",
            "phone",
            "status",
            "error",
            "contact__uuid",
            "chat__uuid",
            "chat__status",
            "chat__error_title",
            "chat__error_code",
        )
        .order_by("id")
    )


def recipient_status(recipient: Recipient) -> str:
    """The recipient's status, following its chat once sent: delivered, read, failed."""
    chat = recipient.chat
    followed = (ChatStatus.DELIVERED, ChatStatus.READ, ChatStatus.FAILED)
    if recipient.status == R.SENT and chat is not None and chat.status in followed:
        return chat.status
    return recipient.status


def recipient_error(recipient: Recipient) -> str | None:
    chat = recipient.chat
    if recipient.status == R.SENT and chat is not None and chat.status == ChatStatus.FAILED:
        title = chat.error_title or "The channel reported the message failed."
        return f"{title} (code {chat.error_code})" if chat.error_code else title
    return recipient.error or None
