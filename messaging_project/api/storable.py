"""Text and JSON that every database we support can store.

PostgreSQL refuses NUL in text and in jsonb (`\\u0000`), and non-finite numbers and lone
surrogates in jsonb; psycopg cannot even encode a lone surrogate in text. SQLite stores
most of them. Checking before the database keeps both alike: what one refuses, the
other never holds.
"""

import math
import re
from typing import Any

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# Deeper JSON is refused before json.dumps() runs out of stack saving it; what WhatsApp
# sends nests a handful of levels.
MAX_JSON_DEPTH = 32


def is_storable_text(text: str) -> bool:
    return UNSTORABLE.search(text) is None


def without_unstorable(text: str) -> str:
    """The text without the characters a database cannot store."""
    return UNSTORABLE.sub("", text)


def is_storable_json(value: Any, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Every string (keys too) storable, every number finite, nested at most `max_depth`
    levels. Walked with a stack, so no input is deep enough to exhaust Python's."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not is_storable_text(item):
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict | list):
            if depth >= max_depth:
                return False
            children = item.values() if isinstance(item, dict) else item
            if isinstance(item, dict) and not all(
                isinstance(key, str) and is_storable_text(key) for key in item
            ):
                return False
            stack.extend((child, depth + 1) for child in children)
        elif not (item is None or isinstance(item, int)):  # bool is an int
            return False
    return True
