"""What the channel says, made storable and showable before anything keeps it.

Graph's answers are not ours: a field may have any JSON type, any size, a NUL (which
PostgreSQL refuses in text and in jsonb), a lone surrogate (which no database driver
can encode, nor the API's UTF-8 response), a float that JSON cannot carry (`1e999`
parses as infinity) or nesting without end. Everything the gateway passes on from
an answer goes through here first, so recording it and answering with it cannot fail.
"""

import json
import math
from typing import Any

from messaging_project.core.storable import UNSTORABLE

MAX_TEXT = 1000  # characters of one text from the channel (an error message, a detail)
MAX_DEPTH = 8  # levels of nested objects kept from the channel's error details
MAX_ITEMS = 50  # entries kept of one object or list
TRUNCATED = "…"  # what stands for a value cut off below MAX_DEPTH

REPLACEMENT = "\ufffd"

# The range of the `error_code` column (a 32-bit integer on PostgreSQL).
CODE_RANGE = range(-(2**31), 2**31)
# Integers beyond 64 bits are kept as their digits: every JSON reader can take those.
INTEGER_RANGE = range(-(2**63), 2**63)


def text(value: Any, limit: int = MAX_TEXT) -> str:
    """The value as storable text: NUL and lone surrogates replaced, at most `limit` long.

    Anything but a string is first written as JSON, so nothing it said is hidden."""
    if not isinstance(value, str):
        value = json.dumps(json_value(value), ensure_ascii=False)
    return UNSTORABLE.sub(REPLACEMENT, value[:limit])


def optional_text(value: Any, limit: int = MAX_TEXT) -> str | None:
    return None if value is None else text(value, limit)


def json_value(value: Any, depth: int = 0) -> Any:
    """A JSON value any database and the API can keep: texts as `text()` makes them,
    non-finite floats and huge integers as text, at most MAX_DEPTH levels of at most
    MAX_ITEMS entries each."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if value in INTEGER_RANGE else text(str(value)[:64])
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict | list | tuple) and depth >= MAX_DEPTH:
        return TRUNCATED
    if isinstance(value, dict):
        return {
            text(key, 255): json_value(item, depth + 1)
            for key, item in list(value.items())[:MAX_ITEMS]
        }
    if isinstance(value, list | tuple):
        return [json_value(item, depth + 1) for item in value[:MAX_ITEMS]]
    return text(repr(value))


def error_code(value: Any) -> int | None:
    """Graph's error code when the `error_code` column can hold it; otherwise None."""
    if isinstance(value, int) and not isinstance(value, bool) and value in CODE_RANGE:
        return value
    return None
