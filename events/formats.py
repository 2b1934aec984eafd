"""The original product's event bodies (`swiftchats` endpoints, docs/events.md).

The original posts `{"event": EVENT, "data": ...}`, unsigned; we sign it as every other
body. Its `data` is the resource record for most events, which is our own `data`: this
module derives it. Where the original carries what our record does not (the WhatsApp
change of a message received, the send response of a message sent, the whole contact
deleted), the emitting service gives it (events/services.py's `swiftchats`), since only
it has it. An event the original never had keeps our `data` under `event`.
"""

import json
from collections.abc import Mapping
from typing import Any

# The original posts a deletion of these as a list of `{uuid, deleted_at}`.
LISTED_DELETIONS = frozenset({"group.deleted", "autoreply.deleted"})


def swiftchats_data(event: str, data: Mapping[str, Any]) -> Any:
    """The original's `data` for an event, from ours."""
    if event in LISTED_DELETIONS:
        return {"list": [data]}
    return data


def swiftchats_body(event: str, data: Mapping[str, Any], *, given: bool = False) -> str:
    """The JSON body of a `swiftchats` delivery; `given`: `data` is the original's already."""
    payload = {"event": str(event), "data": data if given else swiftchats_data(event, data)}
    return json.dumps(payload, separators=(",", ":"))
