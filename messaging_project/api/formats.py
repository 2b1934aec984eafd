"""The wire formats of api.md: two date styles and JSON-encoded string fields."""

import json
from datetime import UTC, datetime
from typing import Any


def laravel_datetime(value: datetime | None) -> str | None:
    """`YYYY-MM-DD HH:MM:SS` in UTC (contacts, canned replies, chats)."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if value else None


def iso_datetime(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with microseconds and `Z` (contact groups)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") if value else None


def json_text(value: Any) -> str | None:
    """A JSON-encoded string field, compact as the reference product writes it."""
    return None if value is None else json.dumps(value, separators=(",", ":"))
