"""The analytics' output shapes: the API's records and their CSV rows (docs/analytics.md)."""

from typing import Any

from analytics.selectors import AgentFigures, CampaignReport, Day

MESSAGE_COLUMNS = ["date", "outbound", "sent", "delivered", "read", "failed", "inbound"]
AGENT_COLUMNS = [
    "username",
    "conversations_assigned",
    "conversations_resolved",
    "messages_sent",
    "median_first_response_seconds",
]


def day_data(day: Day) -> dict[str, Any]:
    return {
        "date": day.date.isoformat(),
        **day.counts,
        "billable": dict(sorted(day.billable.items())),
    }


def day_csv_header(days: list[Day]) -> list[str]:
    """The columns of the days' CSV: the counters, then one `billable_<category>` per
    category that any day has."""
    categories = sorted({category for day in days for category in day.billable})
    return MESSAGE_COLUMNS + [f"billable_{category}" for category in categories]


def day_csv_rows(days: list[Day]) -> list[list[Any]]:
    categories = sorted({category for day in days for category in day.billable})
    return [
        [day.date.isoformat(), *(day.counts[name] for name in MESSAGE_COLUMNS[1:])]
        + [day.billable.get(category, 0) for category in categories]
        for day in days
    ]


def campaign_report_data(report: CampaignReport) -> dict[str, Any]:
    return {
        "recipients": report.recipients,
        "sent": report.sent,
        "delivered": report.delivered,
        "read": report.read,
        "replied": report.replied,
        "failed": report.failed,
        "opted_out": report.opted_out,
        "errors": report.errors,
        "billable": report.billable,
    }


def median_seconds(agent: AgentFigures) -> float | None:
    found = agent.median_first_response
    return None if found is None else round(found, 1)


def agent_data(agent: AgentFigures) -> dict[str, Any]:
    return {
        "username": agent.username,
        "conversations_assigned": agent.assigned,
        "conversations_resolved": agent.resolved,
        "messages_sent": agent.messages,
        "median_first_response_seconds": median_seconds(agent),
    }


def agent_csv_row(agent: AgentFigures) -> list[Any]:
    return [
        agent.username,
        agent.assigned,
        agent.resolved,
        agent.messages,
        "" if median_seconds(agent) is None else median_seconds(agent),
    ]
