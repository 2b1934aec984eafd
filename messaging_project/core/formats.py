"""The wire formats of api.md: two date styles and JSON-encoded string fields."""

import json
from datetime import UTC, datetime
from typing import Any


def laravel_datetime(value: datetime | None) -> str | None:
    """`YYYY-MM-DD HH:MM:SS` in UTC (contacts, canned replies, chats).

    Cut from isoformat(), which is written in C: strftime() cost five times as much, and
    every record shows three or four of these (an event's body, a page of 100 rows)."""
    return value.astimezone(UTC).isoformat(" ", "seconds")[:19] if value else None


def iso_datetime(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with microseconds and `Z` (contact groups); from isoformat() too."""
    return value.astimezone(UTC).isoformat("T", "microseconds")[:26] + "Z" if value else None


# json.dumps() with its own separators makes an encoder for each call.
COMPACT = json.JSONEncoder(separators=(",", ":"))


def json_text(value: Any) -> str | None:
    """A JSON-encoded string field, compact as the reference product writes it."""
    return None if value is None else COMPACT.encode(value)
