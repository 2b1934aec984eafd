"""The figures read: days of the rollup, a campaign's report from its own rows, and
staff's figures (docs/analytics.md). The daily figures read only the rollup, whatever
the number of chats, once the organization's increments are folded into it."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from statistics import median
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, JSONField, OuterRef, Q, Subquery, Sum
from django.db.models.functions import TruncDate

from accounts.models import Organization
from analytics.folding import fold
from analytics.models import (
    BilledMessage,
    DailyBillable,
    DailyMessages,
    DailyStaffMessages,
    FirstResponse,
)
from analytics.queries import MESSAGE_COUNTERS
from analytics.services import billable_category, moved
from business_numbers.models import Number
from campaigns.models import Campaign, Recipient, RecipientStatus
from messaging_project.core.database import one_snapshot
from sending.models import (
    Chat,
    ChatStatus,
    ChatStatusEvent,
    ChatType,
    Conversation,
    ConversationStatus,
    MovedChat,
)

# A reply counts when the customer wrote within this time after their campaign message.
REPLY_WINDOW = timedelta(hours=72)


@dataclass
class Day:
    date: date
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MESSAGE_COUNTERS, 0))
    billable: dict[str, int] = field(default_factory=dict)


def days_between(start: date, end: date) -> list[date]:
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


def messages_per_day(
    *, organization: Organization, start: date, end: date, number: Number | None = None
) -> list[Day]:
    """Each UTC day from `start` to `end`, both included, days with nothing too: the
    organization's changes folded, then two queries over the rollup and two over the
    chats the fold had to leave (held by another transaction at that moment), all on
    one snapshot, so that what is counted is what was committed before it, once."""
    fold(organization.pk)
    scope = Q(organization=organization, day__gte=start, day__lte=end)
    if number is not None:
        scope &= Q(number=number)
    days = {day: Day(day) for day in days_between(start, end)}
    sums = {name: Sum(name) for name in MESSAGE_COUNTERS}
    with one_snapshot():
        rows = DailyMessages.objects.filter(scope).values_list("day").annotate(**sums).order_by()
        for day, *values in rows:
            days[day].counts = {
                name: value or 0 for name, value in zip(MESSAGE_COUNTERS, values, strict=True)
            }
        billable = (
            DailyBillable.objects.filter(scope)
            .values_list("day", "category")
            .annotate(n=Sum("messages"))
            .order_by()
        )
        for day, category, count in billable:
            if count:
                days[day].billable[category] = count
        add_moves_not_counted(days, organization, number)
    return list(days.values())


def add_moves_not_counted(days: dict[date, Day], organization: Organization, number) -> None:
    """Add to `days` the outbound chats of those days that moved since the rollup counted
    them (MovedChat, Chat.counted_status), as the fold will add them, in one query: none, or a few
    held by another transaction during the fold."""
    since, until = day_bounds(min(days), max(days))
    marked = MovedChat.objects.filter(organization_id=organization.pk).values("chat_id")
    moved_chats = Chat._base_manager.filter(
        organization=organization,
        pk__in=marked,
        counted_status__isnull=False,
        type=ChatType.OUTBOUND,
        created_at__gte=since,
        created_at__lt=until,
    )
    if number is not None:
        moved_chats = moved_chats.filter(number=number)
    first_priced = (
        ChatStatusEvent.objects.filter(chat_id=OuterRef("pk"), pricing__billable=True)
        .order_by("timestamp", "id")
        .values("pricing")[:1]
    )
    changes = moved_chats.annotate(
        day=TruncDate("created_at", tzinfo=UTC),
        billed=Exists(BilledMessage.objects.filter(chat_id=OuterRef("pk"))),
        pricing=Subquery(first_priced, output_field=JSONField()),
    ).values_list("day", "counted_status", "status", "billed", "pricing")
    for day, before, after, billed, pricing, count in changes.annotate(n=Count("id")).order_by():
        for name, change in zip(MESSAGE_COUNTERS, moved(before, after), strict=True):
            days[day].counts[name] += change * count
        category = None if billed else billable_category(pricing)
        if category is not None:
            days[day].billable[category] = days[day].billable.get(category, 0) + count


@dataclass
class CampaignReport:
    recipients: int
    sent: int
    delivered: int
    read: int
    replied: int
    failed: int
    opted_out: int
    errors: list[dict[str, Any]]
    billable: dict[str, int]


SENT_UP = [ChatStatus.SENT, ChatStatus.DELIVERED, ChatStatus.READ, ChatStatus.PLAYED]


def campaign_report(campaign: Campaign) -> CampaignReport:
    """A campaign's figures from its own recipients and their chats: three queries,
    each over the campaign's rows through their indexes (a campaign is bounded), once
    the organization's billable messages are folded (claimed)."""
    fold(campaign.organization_id)
    recipients = Recipient.objects.filter(campaign=campaign)
    replied = Chat.objects.filter(
        contact_id=OuterRef("chat__contact_id"),
        type=ChatType.INBOUND,
        created_at__gt=OuterRef("chat__created_at"),
        created_at__lte=OuterRef("chat__created_at") + REPLY_WINDOW,
    )
    failed = Q(status=RecipientStatus.FAILED) | Q(chat__status=ChatStatus.FAILED)
    sent = Q(chat__status__in=SENT_UP)
    totals = recipients.aggregate(
        recipients=Count("id"),
        sent=Count("id", filter=sent),
        delivered=Count("id", filter=Q(chat__status__in=SENT_UP[1:])),
        read=Count("id", filter=Q(chat__status__in=SENT_UP[2:])),
        failed=Count("id", filter=failed),
        replied=Count("id", filter=Q(Exists(replied), chat__isnull=False)),
        opted_out=Count(
            "id", filter=Q(chat__isnull=False, chat__contact__opted_out=True) & ~failed
        ),
    )
    errors = (
        recipients.filter(failed)
        .values_list("chat__error_code", "chat__error_title", "error")
        .annotate(n=Count("id"))
        .order_by()
    )
    merged: dict[tuple[int | None, str], int] = defaultdict(int)
    for code, title, error, count in errors:
        merged[(code, title or error or "")] += count
    billable = (
        BilledMessage.objects.filter(
            chat_id__in=recipients.filter(chat__isnull=False).values("chat_id")
        )
        .values_list("category")
        .annotate(n=Count("chat_id"))
        .order_by("category")
    )
    return CampaignReport(
        **totals,
        errors=[
            {"code": code, "title": title, "count": count}
            for (code, title), count in sorted(merged.items(), key=most_first)
        ],
        billable=dict(billable),
    )


def most_first(item: tuple[tuple[int | None, str], int]) -> tuple:
    """The commonest errors first; WhatsApp's codes before failures without one."""
    (code, title), count = item
    return (-count, code is None, code or 0, title)


@dataclass
class AgentFigures:
    username: str
    assigned: int = 0
    resolved: int = 0
    messages: int = 0
    response_times: list[int] = field(default_factory=list)

    @property
    def median_first_response(self) -> float | None:
        return median(self.response_times) if self.response_times else None


def day_bounds(start: date, end: date) -> tuple[datetime, datetime]:
    return datetime.combine(start, time.min, UTC), datetime.combine(
        end + timedelta(days=1), time.min, UTC
    )


def agents(*, organization: Organization, start: date, end: date) -> list[AgentFigures]:
    """Each staff member of the organization, by username: four queries."""
    since, until = day_bounds(start, end)
    staff = get_user_model().objects.filter(membership__organization=organization)
    figures = {pk: AgentFigures(name) for pk, name in staff.values_list("pk", "username")}
    in_range = Q(last_message_at__gte=since, last_message_at__lt=until)
    conversations = (
        Conversation.objects.filter(organization=organization, assignee__in=list(figures))
        .values_list("assignee_id")
        .annotate(
            assigned=Count("id", filter=in_range),
            resolved=Count(
                "id",
                filter=Q(
                    status=ConversationStatus.RESOLVED,
                    status_changed_at__gte=since,
                    status_changed_at__lt=until,
                ),
            ),
        )
        .order_by()
    )
    for pk, assigned, resolved in conversations:
        figures[pk].assigned, figures[pk].resolved = assigned, resolved
    sent = (
        DailyStaffMessages.objects.filter(organization=organization, day__gte=start, day__lte=end)
        .values_list("staff_id")
        .annotate(n=Sum("messages"))
        .order_by()
    )
    for pk, count in sent:
        if pk in figures:
            figures[pk].messages = count
    responses = FirstResponse.objects.filter(
        organization=organization, answered_at__gte=since, answered_at__lt=until
    ).values_list("staff_id", "seconds")
    for pk, seconds in responses.iterator():
        if pk in figures:
            figures[pk].response_times.append(seconds)
    return sorted(figures.values(), key=lambda agent: agent.username)
