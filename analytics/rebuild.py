"""The rollup recomputed from the chats and their statuses, compared with the one kept
live, and repaired (`manage.py analytics_rebuild`, docs/analytics.md). Reads every chat:
for an operator, never for a request.

The figures kept live are the rollup plus what the next fold adds to it (the increments
appended and the chats marked since: analytics/folding.py), so the chats and those are
read in one snapshot and compared as a read of the figures counts them
(analytics/selectors.py). A repair adds to each differing day what it lacks, rather than
writing the day anew: the folds that run before it and after it add what they take to
whatever is there, so the sum comes out right whichever ran first. Folds are held off
while it writes (hold_off_folds).
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date

from django.db import transaction
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate

from analytics.folding import first_billable
from analytics.models import (
    BilledMessage,
    DailyBillable,
    DailyMessages,
    DailyStaffMessages,
    Increment,
)
from analytics.queries import (
    MESSAGE_COUNTERS,
    add_billable,
    add_messages,
    add_staff_messages,
    hold_off_folds,
)
from analytics.services import added, billable_category, counters, minus, moved, utc_day
from business_numbers.models import Number
from messaging_project.core.database import one_snapshot
from sending.models import Chat, ChatStatus, ChatStatusEvent, ChatType, MovedChat

MessageKey = tuple[int, date, int]  # organization, day, number
BillableKey = tuple[int, date, int, str]  # ... and category
StaffKey = tuple[int, date, int]  # organization, day, staff member


@dataclass
class Figures:
    messages: dict[MessageKey, list[int]] = field(default_factory=dict)
    billable: dict[BillableKey, int] = field(default_factory=dict)
    staff: dict[StaffKey, int] = field(default_factory=dict)
    # The billable messages: chat id, and the day, number and category it counts under.
    billed: dict[int, BillableKey] = field(default_factory=dict)


@dataclass
class Differences:
    messages: list[MessageKey]
    billable: list[BillableKey]
    staff: list[StaffKey]

    def __bool__(self) -> bool:
        return bool(self.messages or self.billable or self.staff)


def from_chats() -> Figures:
    """The figures as the chats and their stored statuses say they are."""
    figures = Figures()
    every_chat = Chat._base_manager.annotate(day=TruncDate("created_at", tzinfo=UTC))
    grouped = every_chat.values_list("organization_id", "day", "number_id", "type", "status")
    for organization, day, number, kind, status, count in grouped.annotate(n=Count("id")):
        one = (
            counters(inbound=1) if kind == ChatType.INBOUND else counters(outbound=1, status=status)
        )
        total = figures.messages.setdefault((organization, day, number), [0] * 6)
        for index, value in enumerate(one):
            total[index] += value * count
    staff_sends = (
        every_chat.filter(type=ChatType.OUTBOUND, created_by__gt=0)
        .exclude(status=ChatStatus.FAILED)
        .values_list("organization_id", "day", "created_by")
        .annotate(n=Count("id"))
    )
    figures.staff = {(org, day, staff): n for org, day, staff, n in staff_sends}
    priced = (
        ChatStatusEvent.objects.filter(
            chat__isnull=False, chat__type=ChatType.OUTBOUND, pricing__billable=True
        )
        .order_by("timestamp", "id")
        .values_list("chat_id", "pricing", "organization_id", "chat__created_at", "chat__number_id")
    )
    billable: dict[BillableKey, int] = defaultdict(int)
    for chat_id, pricing, organization, created_at, number in priced.iterator():
        category = billable_category(pricing)
        if category is None or chat_id in figures.billed:
            continue
        figures.billed[chat_id] = (organization, utc_day(created_at), number, category)
        billable[figures.billed[chat_id]] += 1
    figures.billable = dict(billable)
    return figures


def kept() -> Figures:
    """The figures as the rollup holds them (folded: analytics/folding.py)."""
    figures = Figures()
    sums = {name: Sum(name) for name in MESSAGE_COUNTERS}
    rows = DailyMessages.objects.values_list("organization_id", "day", "number_id").annotate(**sums)
    for organization, day, number, *values in rows:
        if any(values):
            figures.messages[(organization, day, number)] = list(values)
    billable = DailyBillable.objects.values_list(
        "organization_id", "day", "number_id", "category"
    ).annotate(n=Sum("messages"))
    figures.billable = {(o, d, n, c): total for o, d, n, c, total in billable if total}
    staff = DailyStaffMessages.objects.values_list("organization_id", "day", "staff_id").annotate(
        n=Sum("messages")
    )
    figures.staff = {(o, d, s): total for o, d, s, total in staff if total}
    return figures


def waiting(claimed: set[int]) -> Figures:
    """What the next fold adds to the rollup, counted as it counts it (folding.py): the
    increments appended (those of numbers deleted since dropped), and each outbound chat
    marked since counted, from the status counted to the one it has; `billed`, the
    billable messages it claims (`claimed`: those claimed already)."""
    figures = Figures()
    numbers = set(Number._base_manager.values_list("pk", flat=True))
    width = len(MESSAGE_COUNTERS)
    increments = Increment.objects.order_by("id").values_list(
        "organization_id", "day", "number_id", *MESSAGE_COUNTERS, "chat_id", "category"
    )
    claims: dict[int, BillableKey] = {}
    for organization, day, number, *rest in increments.iterator():
        if number not in numbers:
            continue
        key, changes, (chat_id, category) = (organization, day, number), rest[:width], rest[width:]
        if any(changes):
            figures.messages[key] = added(figures.messages.get(key, [0] * width), changes)
        if chat_id is not None and chat_id not in claimed:
            claims.setdefault(chat_id, (*key, category))
    existing = Chat._base_manager.filter(pk__in=list(claims)).values_list("pk", flat=True)
    figures.billed = {chat_id: claims[chat_id] for chat_id in existing}
    marked = Chat._base_manager.filter(
        pk__in=MovedChat.objects.values("chat_id"),
        counted_status__isnull=False,
        type=ChatType.OUTBOUND,
    )
    chats: dict[int, MessageKey] = {}
    rows = marked.values_list(
        "pk", "organization_id", "number_id", "created_at", "counted_status", "status"
    )
    for chat_id, organization, number, created_at, before, after in rows.iterator():
        key = chats[chat_id] = (organization, utc_day(created_at), number)
        figures.messages[key] = added(
            figures.messages.get(key, [0] * width), list(moved(before or "", after))
        )
    for chat_id, category in first_billable(list(chats)).items():
        if chat_id not in claimed and chat_id not in figures.billed:
            figures.billed[chat_id] = (*chats[chat_id], category)
    billable: dict[BillableKey, int] = defaultdict(int)
    for billed_as in figures.billed.values():
        billable[billed_as] += 1
    figures.billable = dict(billable)
    return figures


@dataclass
class Comparison:
    """The figures rebuilt from the chats, and the ones kept live (the rollup and what
    the next fold adds to it), read on one snapshot."""

    rebuilt: Figures
    kept: Figures
    waiting: Figures
    claimed: set[int]  # the chats claimed as billable in the snapshot
    differences: Differences


def compare_with_chats() -> Comparison:
    """Rebuild the figures from the chats and compare them with the live ones, all read
    on one snapshot (PostgreSQL's REPEATABLE READ): what is counted is what was
    committed before it, once, whatever webhooks, sends and folds do meanwhile."""
    with one_snapshot():
        rebuilt = from_chats()
        claimed = set(BilledMessage.objects.values_list("chat_id", flat=True).iterator())
        live, coming = kept(), waiting(claimed)
    return Comparison(rebuilt, live, coming, claimed, compare(together(live, coming), rebuilt))


def together(kept_figures: Figures, coming: Figures) -> Figures:
    """The rollup with the next fold's additions."""
    width = len(MESSAGE_COUNTERS)
    messages = dict(kept_figures.messages)
    for key, values in coming.messages.items():
        messages[key] = added(messages.get(key, [0] * width), values)
    billable = dict(kept_figures.billable)
    for billed_as, count in coming.billable.items():
        billable[billed_as] = billable.get(billed_as, 0) + count
    return Figures(messages=messages, billable=billable, staff=kept_figures.staff)


def compare(live: Figures, rebuilt: Figures) -> Differences:
    """The keys whose figures differ, a missing key counting as zeros."""

    def differing(a: dict, b: dict, zero) -> list:
        return sorted(k for k in a.keys() | b.keys() if a.get(k, zero) != b.get(k, zero))

    return Differences(
        messages=differing(live.messages, rebuilt.messages, [0] * len(MESSAGE_COUNTERS)),
        billable=differing(live.billable, rebuilt.billable, 0),
        staff=differing(live.staff, rebuilt.staff, 0),
    )


@transaction.atomic
def repair(comparison: Comparison) -> None:
    """Add to each differing day what it lacks against the rebuilt figures (what the
    rollup and the next fold's additions came to in the snapshot), and claim the billable
    messages the rebuilt figures count that nothing claimed, so that no later status
    counts them again. Folds are held off meanwhile; one that ran since the snapshot
    added what it took (it was waiting in the snapshot), except a billable message
    claimed since for a status come after: the repair counts it, so takes it off."""
    hold_off_folds()
    rebuilt, differences = comparison.rebuilt, comparison.differences
    live = together(comparison.kept, comparison.waiting)
    zero = [0] * len(MESSAGE_COUNTERS)
    add_messages(
        {
            key: minus(rebuilt.messages.get(key, zero), live.messages.get(key, zero))
            for key in differences.messages
        }
    )
    billable = {
        key: rebuilt.billable.get(key, 0) - live.billable.get(key, 0)
        for key in differences.billable
    }
    unclaimed = {
        chat_id: key
        for chat_id, key in rebuilt.billed.items()
        if chat_id not in comparison.claimed and chat_id not in comparison.waiting.billed
    }
    for chat_id in claimed_now(list(unclaimed)):
        key = unclaimed.pop(chat_id)
        billable[key] = billable.get(key, 0) - 1
    add_billable(billable)
    add_staff_messages(
        {
            key: rebuilt.staff.get(key, 0) - comparison.kept.staff.get(key, 0)
            for key in differences.staff
        }
    )
    BilledMessage.objects.bulk_create(
        [BilledMessage(chat_id=chat_id, category=key[3]) for chat_id, key in unclaimed.items()],
        ignore_conflicts=True,
        batch_size=1000,
    )


def claimed_now(chat_ids: list[int]) -> set[int]:
    """Which of these chats are claimed as billable now."""
    found: set[int] = set()
    for start in range(0, len(chat_ids), 1000):
        chunk = chat_ids[start : start + 1000]
        found |= set(
            BilledMessage.objects.filter(chat_id__in=chunk).values_list("chat_id", flat=True)
        )
    return found
