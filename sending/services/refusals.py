"""Sends refused before the channel is called (docs/webhooks.md): a free-form message
outside the customer-service window (a template WhatsApp has not approved is refused by
business_numbers.services). WhatsApp would refuse it; refusing here spares the call.
Nothing is recorded for it.
"""

from typing import Any

from django.utils import timezone

from accounts.models import Organization
from business_numbers.models import Number
from sending.models import SERVICE_WINDOW, Chat, ChatType

# WhatsApp's own code for a free-form message outside the window.
OUTSIDE_WINDOW_CODE = 131047
ENFORCED = "The organization enforces the 24-hour customer-service window."
# A conversation's sends keep to the window whatever the organization's setting.
CONVERSATION_WINDOW = "The conversation's 24-hour customer-service window is closed."


class ServiceWindowClosed(Exception):
    """A free-form message to a number that has sent nothing in the last 24 hours, with
    the organization's `enforce_service_window` on."""

    code = OUTSIDE_WINDOW_CODE
    message = (
        "Re-engagement message: more than 24 hours have passed since the customer last "
        "replied to this number; only a template message can be sent."
    )

    def __init__(self, details: str = ENFORCED) -> None:
        super().__init__(self.message)
        self.details = details

    @property
    def channel_error(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "type": "service_window",
            "message": self.message,
            "details": self.details,
            "fbtrace_id": None,
        }


def check_service_window(organization: Organization, phone: str, number: Number) -> None:
    """Whether `phone` may get a free-form message from `number`: always, unless the
    organization enforces the window; then only if it wrote to that number in the last
    24 hours. One
    indexed look-up (the contact by number, its inbound chats by time). A message
    recorded lately but written long ago (the Business app's history) does not count:
    WhatsApp's own time, when known, must be in the window too."""
    if not Number.objects.default_for(organization).enforce_service_window:
        return
    since = timezone.now() - SERVICE_WINDOW
    open_window = (
        Chat.objects.filter(
            contact__organization=organization,
            contact__phone=phone,
            number=number,
            type=ChatType.INBOUND,
            created_at__gte=since,
        )
        .exclude(sent_at__lt=since)
        .exists()
    )
    if not open_window:
        raise ServiceWindowClosed()
