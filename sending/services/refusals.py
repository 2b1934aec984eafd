"""Sends refused before the channel is called (contract section 14): a template WhatsApp
has not approved, and a free-form message outside the customer-service window. Either
would be refused by WhatsApp; refusing here spares the call and, for a campaign, the
recipients it would fail one by one. Nothing is recorded for them.
"""

from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from accounts.models import Organization
from sending.models import Channel, Chat, ChatType, MessageTemplate

# WhatsApp's own code for a free-form message outside the window.
OUTSIDE_WINDOW_CODE = 131047
SERVICE_WINDOW = timedelta(hours=24)
APPROVED = "APPROVED"


class TemplateNotApproved(ValidationError):
    """The template is known locally and WhatsApp has not approved it (paused, disabled,
    rejected, pending...). A ValidationError, so that a caller that only knew those
    (a campaign's creation) still refuses it as bad input; the send API answers 422."""

    code = "template_not_approved"

    def __init__(self, template: MessageTemplate) -> None:
        self.template = template
        self.status = template.status
        self.message = (
            f"The template {template.name} ({template.language}) is {template.status} on "
            "WhatsApp, not APPROVED: it cannot be sent until WhatsApp approves it again."
        )
        super().__init__({"template": [self.message]})

    @property
    def channel_error(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "type": "template_status",
            "message": self.message,
            "details": {"status": self.status, "reason": self.template.reason or None},
            "fbtrace_id": None,
        }


class ServiceWindowClosed(Exception):
    """A free-form message to a number that has sent nothing in the last 24 hours, with
    the organization's `enforce_service_window` on."""

    code = OUTSIDE_WINDOW_CODE
    message = (
        "Re-engagement message: more than 24 hours have passed since the customer last "
        "replied to this number; only a template message can be sent."
    )

    def __init__(self) -> None:
        super().__init__(self.message)

    @property
    def channel_error(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "type": "service_window",
            "message": self.message,
            "details": "The organization enforces the 24-hour customer-service window.",
            "fbtrace_id": None,
        }


def check_approved(template: MessageTemplate | None) -> None:
    """A template known locally must be APPROVED; one never synced (or whose status was
    never reported) is left to WhatsApp."""
    if template is not None and template.status and template.status.upper() != APPROVED:
        raise TemplateNotApproved(template)


def check_service_window(organization: Organization, phone: str) -> None:
    """Whether `phone` may get a free-form message: always, unless the organization
    enforces the window; then only if it sent us a message in the last 24 hours. One
    indexed look-up (the contact by number, its inbound chats by time). A message
    recorded lately but written long ago (the Business app's history) does not count:
    WhatsApp's own time, when known, must be in the window too."""
    if not Channel.of(organization).enforce_service_window:
        return
    since = timezone.now() - SERVICE_WINDOW
    open_window = (
        Chat.objects.filter(
            contact__organization=organization,
            contact__phone=phone,
            type=ChatType.INBOUND,
            created_at__gte=since,
        )
        .exclude(sent_at__lt=since)
        .exists()
    )
    if not open_window:
        raise ServiceWindowClosed()
