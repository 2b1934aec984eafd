"""The webhook's statuses parsed: each status item checked and read into a StatusUpdate,
then stored by sending (`store_statuses`), which moves the chats forward."""

from datetime import datetime
from typing import Any

from accounts.models import Organization
from inbound.services.webhook_items import (
    WebhookSummary,
    as_dict,
    as_list,
    message_id,
    parse_timestamp,
    skip,
)
from messaging_project.core.storable import is_storable_json, without_unstorable
from sending.services import StatusUpdate, store_statuses
from sending.services.statuses import WEBHOOK_STATUSES


def record_statuses(
    organization: Organization, items: list[tuple[dict, dict]], summary: WebhookSummary
) -> None:
    """Store a delivery's status events (each with its change's value) and move their
    chats forward; an item that cannot be read is skipped."""
    new, duplicates = store_statuses(organization, parse_statuses(organization, items, summary))
    summary.statuses += new
    summary.duplicates += duplicates


def parse_statuses(
    organization: Organization,
    items: list[tuple[dict, dict]],
    summary: WebhookSummary,
    received_at: datetime | None = None,
) -> list[StatusUpdate]:
    """The items read (`received_at`: when the webhook took them, if not now); an item
    that cannot be read is skipped."""
    updates: list[StatusUpdate] = []
    for item, value in items:
        try:
            updates.append(parse_status(item, value, received_at))
        except (KeyError, TypeError, ValueError, OverflowError, OSError) as error:
            skip(organization, summary, error)
    return updates


def parse_status(
    item: dict, value: dict | None = None, received_at: datetime | None = None
) -> StatusUpdate:
    wam_id, status = message_id(item), str(item["status"])
    if status not in WEBHOOK_STATUSES:
        raise ValueError(f"unknown status {status!r}")
    timestamp = parse_timestamp(item["timestamp"])
    errors = as_list(item.get("errors"))
    callback = item.get("biz_opaque_callback_data")
    return StatusUpdate(
        wam_id,
        status,
        timestamp,
        **failure_columns(as_dict(errors[0]) if errors else {}),
        pricing=kept_object(item.get("pricing")),
        conversation=kept_object(item.get("conversation")),
        callback_data=without_unstorable(callback)[:512] if isinstance(callback, str) else "",
        item=item,
        value=value,
        received_at=received_at,
    )


def kept_object(value: Any) -> dict | None:
    """A status's `pricing` or `conversation` as WhatsApp sent it; dropped (the status
    kept) when it is not an object or holds what a database cannot store."""
    return value if isinstance(value, dict) and value and is_storable_json(value) else None


def failure_columns(error: dict) -> dict[str, Any]:
    """The columns of Graph's error on a failed status. The failure is what counts, so a
    title a database cannot store is cleaned and such an error object is dropped."""
    code = error.get("code")
    title = str(error.get("title") or error.get("message") or "")
    return {
        # Graph's codes are small; anything else would not fit the column.
        "error_code": code if isinstance(code, int) and 0 <= code < 2**31 else None,
        "error_title": without_unstorable(title)[:255],
        "error_details": error if error and is_storable_json(error) else None,
    }
