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


def unstorable(text: str) -> str | None:
    """Why a database cannot store `text`, or None, worded as DRF's CharField words the
    same refusal (the API's errors say it so)."""
    if "\x00" in text:
        return "Null characters are not allowed."
    found = UNSTORABLE.search(text)
    if found:
        return f"Surrogate characters are not allowed: U+{ord(found.group()):X}."
    return None


def is_storable_text(text: str) -> bool:
    return UNSTORABLE.search(text) is None


def without_unstorable(text: str) -> str:
    """The text without the characters a database cannot store."""
    return UNSTORABLE.sub("", text)


def json_problem(value: Any, *, max_depth: int) -> tuple[tuple, str] | None:
    """The first thing in parsed JSON that cannot be passed on and stored, as (its path,
    why), or None: objects or lists more than `max_depth` levels inside `value`, text a
    database cannot store (in a value or a key), a number that is not finite (1e999
    parses as infinity, which neither jsonb nor a JSON answer can hold).

    Walks with its own stack, in document order: no nesting can exhaust Python's.
    """
    stack: list[tuple[Any, tuple, int]] = [(value, (), 0)]
    while stack:
        item, path, level = stack.pop()
        if isinstance(item, str):
            problem = unstorable(item)
            if problem:
                return path, problem
        elif isinstance(item, float) and not math.isfinite(item):
            return path, "Numbers must be finite."
        elif isinstance(item, dict | list):
            if level > max_depth:
                return path, f"Nested too deeply: at most {max_depth} levels of objects and lists."
            if isinstance(item, dict):
                if any(isinstance(key, str) and unstorable(key) for key in item):
                    return (
                        path,
                        "A key here holds a NUL or a lone surrogate, which cannot be stored.",
                    )
                children = list(item.items())
            else:
                children = list(enumerate(item))
            stack.extend((child, (*path, key), level + 1) for key, child in reversed(children))
    return None


def is_storable_json(value: Any, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Every string (keys too) storable, every number finite, objects and lists at most
    `max_depth` levels inside `value`."""
    return json_problem(value, max_depth=max_depth) is None
