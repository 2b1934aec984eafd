"""Scenario 8: matching inbound texts against an organization's 10,000 canned replies.

Run by the `api` scenario as `python -m bench.matching ORGANIZATION_UUID` against its
seeded scratch database; prints one JSON line. Measures `find_reply` (what the webhook
calls: the cached index, its version check in the shared cache, and the one query
that loads the matched reply) and the in-memory `ReplyIndex.match` alone.
"""

import json
import os
import random
import sys
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")
django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from accounts.models import Organization  # noqa: E402
from canned_replies.matching import find_reply, index_for  # noqa: E402
from canned_replies.models import CannedReply  # noqa: E402

MESSAGES = 2000


def texts(replies: int) -> list[str]:
    """Hits of every criterion, near misses and long chatty messages, in a fixed order."""
    rng = random.Random(6)
    filler = "thanks so much for the quick answer yesterday, could you tell me more about"
    out = []
    for i in range(MESSAGES):
        n = rng.randint(1, replies)
        out.append(
            [
                f"keyword {n} offer",  # the trigger itself
                f"Hi! keyword {n} offer please",  # contains
                f"KEYWORD {n} OFFER   and more",  # starts with, shouting and spaces
                f"so, keyword {n} offer",  # ends with
                f"{filler} the price of item {n}",  # no match, 90 characters
                "ok",  # short, no match
            ][i % 6]
        )
    return out


def main() -> None:
    organization = Organization.objects.get(uuid=sys.argv[1])
    replies = CannedReply.objects.live().filter(organization=organization).count()
    started = time.perf_counter()
    index_for(organization.id)
    build_ms = (time.perf_counter() - started) * 1000
    messages = texts(replies)

    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        matched = sum(find_reply(organization=organization, text=t) is not None for t in messages)
        per_message = (time.perf_counter() - started) / len(messages)
    index = index_for(organization.id)
    started = time.perf_counter()
    for text in messages:
        index.match(text)
    match_only = (time.perf_counter() - started) / len(messages)
    print(
        json.dumps(
            {
                "replies": replies,
                "messages": len(messages),
                "matched": matched,
                "index_build_ms": round(build_ms, 1),
                "per_message_us": round(per_message * 1e6, 1),
                "match_only_us": round(match_only * 1e6, 1),
                "queries_per_message": round(len(queries) / len(messages), 2),
            }
        )
    )


if __name__ == "__main__":
    main()
