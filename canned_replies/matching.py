"""Which canned reply answers an inbound text.

Rules (docs/canned-replies.md): a trigger with commas is a list of alternatives
(`hi,hello,hey`), each matched by the reply's criterion. A tapped reply button or list
row whose id a `button` reply names (exactly, case and all) is answered by that reply,
before any text rule. Otherwise the text (a tap's title, a quick-reply button's
payload) and the triggers are normalised (case-folded, trimmed, inner whitespace
collapsed); an `exact match` reply wins over all others; among the `contains`,
`starts with` and `ends with` replies the longest trigger wins; ties go to the oldest
reply; deleted replies never match.

An organization's replies are compiled once into a ReplyIndex of hash lookups, kept
per process and rebuilt only when the organization's replies change (a version
number in the shared cache, bumped by every write in canned_replies.services). So a
message costs a few dictionary look-ups, not a query per reply.
"""

import threading
import uuid
from bisect import bisect_right
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db import transaction

from canned_replies.models import CannedReply, MatchCriteria


def normalize(text: str) -> str:
    return " ".join(text.casefold().split())


def alternatives(trigger: str) -> list[str]:
    """A trigger's alternatives: the pieces between its commas, blank ones left out."""
    return [piece for piece in trigger.split(",") if piece.strip()]


@dataclass
class ReplyIndex:
    """Triggers by criterion, each mapping a normalised trigger to its oldest reply id."""

    exact: dict[str, int] = field(default_factory=dict)
    starts: dict[str, int] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)
    contains: dict[str, int] = field(default_factory=dict)
    buttons: dict[str, int] = field(default_factory=dict)  # by exact id, not normalised
    replies: dict[int, CannedReply] = field(default_factory=dict)  # by id, for the answer

    @classmethod
    def build(cls, replies: list[tuple[int, str, str]]) -> "ReplyIndex":
        """From (id, trigger, match_criteria) rows, oldest first."""
        index = cls()
        by_criteria: dict[str, dict[str, int]] = {
            MatchCriteria.EXACT_MATCH: index.exact,
            MatchCriteria.STARTS_WITH: index.starts,
            MatchCriteria.ENDS_WITH: index.ends,
            MatchCriteria.CONTAINS: index.contains,
        }
        for reply_id, trigger, criteria in sorted(replies):
            for alternative in alternatives(trigger):
                if criteria == MatchCriteria.BUTTON:
                    index.buttons.setdefault(alternative.strip(), reply_id)
                    continue
                key = normalize(alternative)
                if key and criteria in by_criteria:
                    by_criteria[criteria].setdefault(key, reply_id)
        index._prepare()
        return index

    def _prepare(self) -> None:
        # Distinct trigger lengths, shortest first, for the length-driven look-ups.
        self.starts_lengths = sorted({len(t) for t in self.starts})
        self.ends_lengths = sorted({len(t) for t in self.ends})
        self.contains_lengths = sorted({len(t) for t in self.contains})
        # Contains triggers longest first (oldest first within a length), for scanning.
        self.contains_by_length = sorted(self.contains.items(), key=lambda kv: (-len(kv[0]), kv[1]))
        self.contains_sizes = sorted(len(t) for t in self.contains)

    def match(self, text: str, tapped: str | None = None) -> int | None:
        """The id of the reply that answers `text` (and `tapped`, the id of a tapped
        button or row, or a quick-reply button's payload), or None."""
        if tapped and tapped.strip() in self.buttons:
            return self.buttons[tapped.strip()]
        message = normalize(text)
        if not message:
            return None
        if message in self.exact:
            return self.exact[message]
        size = len(message)
        # (trigger length, -reply id): the largest wins, so longest, then oldest.
        best: tuple[int, int] | None = None
        for lengths, table, piece in (
            (self.starts_lengths, self.starts, lambda n: message[:n]),
            (self.ends_lengths, self.ends, lambda n: message[size - n :]),
        ):
            for n in reversed(lengths[: bisect_right(lengths, size)]):
                if best is not None and n < best[0]:
                    break
                reply_id = table.get(piece(n))
                if reply_id is not None:
                    best = max(best or (0, 0), (n, -reply_id))
                    break
        found = self._longest_contained(message, floor=best[0] if best else 1)
        if found is not None:
            best = max(best or (0, 0), found)
        return -best[1] if best else None

    def _longest_contained(self, message: str, floor: int) -> tuple[int, int] | None:
        """The longest (then oldest) contains-trigger found in the message, as
        (length, -id), considering only triggers at least `floor` long.

        Two exact strategies, whichever does less work for this message: look up every
        window of the message for each trigger length, or test each trigger that fits.
        """
        size = len(message)
        lengths = [n for n in self.contains_lengths if floor <= n <= size]
        if not lengths:
            return None
        window_cost = sum(size - n + 1 for n in lengths)
        fitting = bisect_right(self.contains_sizes, size) - bisect_right(
            self.contains_sizes, floor - 1
        )
        if window_cost <= fitting:
            for n in reversed(lengths):
                ids = [
                    self.contains[message[i : i + n]]
                    for i in range(size - n + 1)
                    if message[i : i + n] in self.contains
                ]
                if ids:
                    return (n, -min(ids))
            return None
        for trigger, reply_id in self.contains_by_length:
            if len(trigger) > size:
                continue
            if len(trigger) < floor:
                return None
            if trigger in message:
                return (len(trigger), -reply_id)
        return None


# Per-process compiled indexes: organization id -> (version, index).
_indexes: dict[int, tuple[str, ReplyIndex]] = {}
_lock = threading.Lock()


def version_key(organization_id: int) -> str:
    return f"canned_replies:version:{organization_id}"


def replies_changed(organization_id: int) -> None:
    """Called by every write, so every process rebuilds its index on next use.

    Now, for this process (which sees its own uncommitted rows), and again after the
    commit, so no other process keeps an index built from rows read before it.
    """
    key = version_key(organization_id)
    cache.delete(key)
    transaction.on_commit(lambda: cache.delete(key))


def current_version(organization_id: int) -> str:
    key = version_key(organization_id)
    version = cache.get(key)
    if version is None:
        cache.add(key, uuid.uuid4().hex, timeout=None)
        version = cache.get(key)
    return version


def index_for(organization_id: int) -> ReplyIndex:
    version = current_version(organization_id)
    cached = _indexes.get(organization_id)
    if cached is not None and cached[0] == version:
        return cached[1]
    replies = list(CannedReply.objects.live().filter(organization_id=organization_id))
    index = ReplyIndex.build([(r.id, r.trigger, r.match_criteria) for r in replies])
    # The replies themselves come along, so that answering a message needs no query.
    index.replies = {reply.id: reply for reply in replies}
    with _lock:
        _indexes[organization_id] = (version, index)
    return index


def find_reply(*, organization, text: str, tapped: str | None = None) -> CannedReply | None:
    """The organization's canned reply that answers `text`, or None; `tapped`: the id of
    the button or row the customer tapped, matched by the `button` replies first.

    The reply is the one read when the index was built, which is as fresh as the index:
    any write to the organization's replies rebuilds both.
    """
    index = index_for(organization.id)
    reply_id = index.match(text, tapped)
    return None if reply_id is None else index.replies[reply_id]
