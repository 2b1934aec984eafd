"""The original product's event bodies (`swiftchats` endpoints, docs/events.md).

The original posts `{"event": EVENT, "data": ...}`, unsigned; we sign it as every other
body. Its `data` is the resource record for most events, which is our own `data`: this
module derives it. Where the original carries what our record does not (the WhatsApp
change of a message received or of a status, the send response of a message sent), the
emitting service gives it (events/services.py's `swiftchats`), since only it has it. An
event the original never had keeps our `data` under `event`.
"""

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from messaging_project.core.formats import iso_datetime

# The original posts a deletion as `{"list": ...}`: of these, a list of `{uuid, deleted_at}`
# (its contact and group services) ...
LISTED_DELETIONS = frozenset({"contact.deleted", "group.deleted"})
# ... and of this one, a single `{uuid, deleted_at}` object (its auto-reply service).
SINGLE_DELETIONS = frozenset({"autoreply.deleted"})


def original_deleted_at(value: Any) -> Any:
    """A deletion time as the original writes it (Carbon's toISOString: ISO 8601 in UTC
    with microseconds and `Z`), from either of our two date styles."""
    if not isinstance(value, str) or value.endswith("Z"):
        return value
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    return iso_datetime(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))


def swiftchats_data(event: str, data: Mapping[str, Any]) -> Any:
    """The original's `data` for an event, from ours."""
    if event in LISTED_DELETIONS or event in SINGLE_DELETIONS:
        gone = {"uuid": data.get("uuid"), "deleted_at": original_deleted_at(data.get("deleted_at"))}
        return {"list": [gone] if event in LISTED_DELETIONS else gone}
    return data


def swiftchats_body(event: str, data: Mapping[str, Any], *, given: bool = False) -> str:
    """The JSON body of a `swiftchats` delivery; `given`: `data` is the original's already."""
    payload = {"event": str(event), "data": data if given else swiftchats_data(event, data)}
    return json.dumps(payload, separators=(",", ":"))
