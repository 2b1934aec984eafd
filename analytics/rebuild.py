"""The rollup recomputed from the chats and their statuses, compared with the one kept
live, and repaired (`manage.py analytics_rebuild`, docs/analytics.md). Reads every chat:
for an operator, never for a request."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date

from django.db import transaction
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate

from analytics.models import BilledMessage, DailyBillable, DailyMessages, DailyStaffMessages
from analytics.queries import MESSAGE_COUNTERS
from analytics.services import billable_category, counters, utc_day
from sending.models import Chat, ChatStatus, ChatStatusEvent, ChatType

MessageKey = tuple[int, date, int]  # organization, day, number
BillableKey = tuple[int, date, int, str]  # ... and category
StaffKey = tuple[int, date, int]  # organization, day, staff member


@dataclass
class Figures:
    messages: dict[MessageKey, list[int]] = field(default_factory=dict)
    billable: dict[BillableKey, int] = field(default_factory=dict)
    staff: dict[StaffKey, int] = field(default_factory=dict)
    billed: dict[int, str] = field(default_factory=dict)  # chat id: category


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
        figures.billed[chat_id] = category
        billable[(organization, utc_day(created_at), number, category)] += 1
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


def compare(live: Figures, rebuilt: Figures) -> Differences:
    def differing(a: dict, b: dict) -> list:
        return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))

    return Differences(
        messages=differing(live.messages, rebuilt.messages),
        billable=differing(live.billable, rebuilt.billable),
        staff=differing(live.staff, rebuilt.staff),
    )


@transaction.atomic
def repair(rebuilt: Figures, differences: Differences) -> None:
    """Replace the rows of each differing day with the rebuilt figures."""
    for organization, day, number in differences.messages:
        DailyMessages.objects.filter(
            organization_id=organization, day=day, number_id=number
        ).delete()
        values = rebuilt.messages.get((organization, day, number))
        if values:
            DailyMessages.objects.create(
                organization_id=organization,
                day=day,
                number_id=number,
                **dict(zip(MESSAGE_COUNTERS, values, strict=True)),
            )
    for organization, day, number, category in differences.billable:
        DailyBillable.objects.filter(
            organization_id=organization, day=day, number_id=number, category=category
        ).delete()
        count = rebuilt.billable.get((organization, day, number, category))
        if count:
            DailyBillable.objects.create(
                organization_id=organization,
                day=day,
                number_id=number,
                category=category,
                messages=count,
            )
    for organization, day, staff in differences.staff:
        DailyStaffMessages.objects.filter(
            organization_id=organization, day=day, staff_id=staff
        ).delete()
        count = rebuilt.staff.get((organization, day, staff))
        if count:
            DailyStaffMessages.objects.create(
                organization_id=organization, day=day, staff_id=staff, messages=count
            )
    # The billable messages counted from now on are those not counted already.
    BilledMessage.objects.bulk_create(
        [BilledMessage(chat_id=chat, category=c) for chat, c in rebuilt.billed.items()],
        ignore_conflicts=True,
        batch_size=1000,
    )
