"""The webhook's fields other than `messages`: what WhatsApp says about the account,
its number, its templates and its customers' preferences (contract section 14).

Each field has one handler, named in FIELD_HANDLERS; a handler gets the change's
`value` and runs in its own savepoint, so a malformed change is skipped alone.
"""

from collections.abc import Callable

from accounts.models import Organization
from sending.services.conversation import (
    record_business_app_echoes,
    record_history,
    record_user_preferences,
)
from sending.services.webhook_items import WebhookSummary, guarded

FieldHandler = Callable[[Organization, dict, WebhookSummary], None]

FIELD_HANDLERS: dict[str, FieldHandler] = {
    # Customers and the conversation (sending/services/conversation.py)
    "user_preferences": record_user_preferences,
    "smb_message_echoes": record_business_app_echoes,
    "history": record_history,
}


def record_account_news(
    organization: Organization, field: object, value: dict, summary: WebhookSummary
) -> None:
    handler = FIELD_HANDLERS.get(field) if isinstance(field, str) else None
    if handler is None:
        summary.skipped += 1
        return
    guarded(handler, organization, value, summary)
