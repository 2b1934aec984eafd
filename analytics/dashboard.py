"""The admin's analytics dashboard (/admin/analytics/): the API's figures as charts drawn
on the server, each downloadable as CSV. For managers and superusers; a staff member sees
their organization's figures, a superuser picks the organization."""

import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.admin_scoping import staff_organization
from accounts.models import Organization
from accounts.roles import is_manager
from analytics import charts, selectors
from analytics.api.serializers import RangeSerializer
from analytics.api.views import csv_response
from analytics.representations import (
    AGENT_COLUMNS,
    agent_csv_row,
    day_csv_header,
    day_csv_rows,
    median_seconds,
)
from campaigns.models import Campaign

# The campaigns drawn: the latest that ran in the range.
CAMPAIGNS_SHOWN = 5
FUNNEL = ["recipients", "sent", "delivered", "read", "replied"]


@dataclass
class Range:
    start: date
    end: date


def chosen_range(request) -> Range:
    """`from` and `to` as the API takes them; the last 7 days when absent or invalid."""
    given = RangeSerializer(data=request.GET)
    if given.is_valid():
        return Range(given.validated_data["from"], given.validated_data["to"])
    end = timezone.now().date()
    return Range(end - timedelta(days=6), end)


def chosen_organization(request) -> Organization | None:
    organization = staff_organization(request)
    if organization is not None or not request.user.is_superuser:
        return organization
    wanted = request.GET.get("organization", "")
    found = Organization.objects.filter(uuid=wanted).first() if _is_uuid(wanted) else None
    return found or Organization.objects.order_by("id").first()


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def campaigns_in(organization: Organization, span: Range) -> list[Campaign]:
    since, until = selectors.day_bounds(span.start, span.end)
    ran = Q(started_at__gte=since, started_at__lt=until) | Q(
        created_at__gte=since, created_at__lt=until
    )
    return list(
        Campaign.objects.live()
        .filter(ran, organization=organization)
        .order_by("-id")[:CAMPAIGNS_SHOWN]
    )


def dashboard_view(request):
    if not is_manager(request.user):
        raise PermissionDenied
    span = chosen_range(request)
    organization = chosen_organization(request)
    days = (
        selectors.messages_per_day(organization=organization, start=span.start, end=span.end)
        if organization
        else []
    )
    billable: dict[str, int] = {}
    for day in days:
        for category, count in day.billable.items():
            billable[category] = billable.get(category, 0) + count
    campaigns = campaigns_in(organization, span) if organization else []
    reports = [(campaign, selectors.campaign_report(campaign)) for campaign in campaigns]
    agents = (
        selectors.agents(organization=organization, start=span.start, end=span.end)
        if organization
        else []
    )
    wanted = request.GET.get("csv")
    if wanted:
        return csv_download(wanted, days, billable, reports, agents)
    status_names = [_("sent"), _("delivered"), _("read"), _("failed"), _("inbound")]
    context: dict[str, Any] = {
        **admin_context(request),
        "title": _("Analytics"),
        "organization": organization,
        "organizations": Organization.objects.order_by("name") if request.user.is_superuser else [],
        "start": span.start.isoformat(),
        "end": span.end.isoformat(),
        "messages_chart": charts.grouped_columns(
            [
                (
                    day.date.strftime("%m-%d"),
                    [day.counts[name] for name in ("sent", "delivered", "read", "failed")]
                    + [day.counts["inbound"]],
                )
                for day in days
            ],
            status_names,
        ),
        "billable_chart": charts.horizontal_bars(sorted(billable.items())),
        "funnels": [
            (
                campaign,
                charts.horizontal_bars(
                    [
                        (name, getattr(report, key))
                        for name, key in zip(funnel_names(), FUNNEL, strict=True)
                    ],
                    colour=charts.PALETTE[0],
                ),
            )
            for campaign, report in reports
        ],
        "agents_chart": charts.horizontal_bars(
            [(agent.username, median_seconds(agent) or 0) for agent in agents], unit=" s"
        ),
        "totals": {
            name: sum(day.counts[name] for day in days)
            for name in ("outbound", "sent", "delivered", "read", "failed", "inbound")
        },
    }
    return TemplateResponse(request, "admin/analytics/dashboard.html", context)


def funnel_names() -> list[str]:
    return [_("recipients"), _("sent"), _("delivered"), _("read"), _("replied")]


def admin_context(request) -> dict[str, Any]:
    return admin.site.each_context(request)


def csv_download(wanted: str, days, billable, reports, agents) -> HttpResponse:
    if wanted == "billable":
        return csv_response("billable.csv", ["category", "messages"], sorted(billable.items()))
    if wanted == "campaigns":
        return csv_response(
            "campaigns.csv",
            ["campaign", "uuid", *FUNNEL, "failed", "opted_out"],
            [
                [c.name, str(c.uuid), *(getattr(r, k) for k in FUNNEL), r.failed, r.opted_out]
                for c, r in reports
            ],
        )
    if wanted == "agents":
        return csv_response("agents.csv", AGENT_COLUMNS, [agent_csv_row(a) for a in agents])
    return csv_response("messages.csv", day_csv_header(days), day_csv_rows(days))
