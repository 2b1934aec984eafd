"""Analytics over the API (docs/analytics.md). Thin: check the range, read, shape; CSV
when asked with `format=csv`."""

import csv
import io
import uuid
from collections.abc import Sequence
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from analytics import selectors
from analytics.api.serializers import MessagesRangeSerializer, RangeSerializer
from analytics.representations import (
    AGENT_COLUMNS,
    agent_csv_row,
    agent_data,
    campaign_report_data,
    day_csv_header,
    day_csv_rows,
    day_data,
)
from campaigns.models import Campaign
from messaging_project.api.viewsets import OrganizationScopedMixin


def csv_response(file_name: str, header: Sequence[str], rows: Sequence[Sequence[Any]]):
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{file_name}"'
    return response


class AnalyticsView(OrganizationScopedMixin, APIView):
    """JSON always, whatever `format` says: `format=csv` is this view's own choice of body,
    not DRF's renderer switch (an error stays JSON)."""

    def perform_content_negotiation(self, request, force=False):
        return (JSONRenderer(), JSONRenderer.media_type)

    def checked(self, serializer_class) -> dict[str, Any]:
        given = serializer_class(
            data=self.request.query_params, context={"organization": self.organization}
        )
        given.is_valid(raise_exception=True)
        return dict(given.validated_data)


class MessagesView(AnalyticsView):
    """`GET /api/analytics/messages`: a row per UTC day."""

    def get(self, request):
        query = self.checked(MessagesRangeSerializer)
        days = selectors.messages_per_day(
            organization=self.organization,
            start=query["from"],
            end=query["to"],
            number=query.get("number"),
        )
        if query["format"] == "csv":
            return csv_response("messages.csv", day_csv_header(days), day_csv_rows(days))
        return Response({"data": [day_data(day) for day in days]})


class AgentsView(AnalyticsView):
    """`GET /api/analytics/agents`: a row per staff member."""

    def get(self, request):
        query = self.checked(RangeSerializer)
        agents = selectors.agents(
            organization=self.organization, start=query["from"], end=query["to"]
        )
        if query["format"] == "csv":
            return csv_response("agents.csv", AGENT_COLUMNS, [agent_csv_row(a) for a in agents])
        return Response({"data": [agent_data(agent) for agent in agents]})


class CampaignReportView(AnalyticsView):
    """`GET /api/campaigns/{uuid}/report`."""

    def get(self, request, uuid_text: str):
        try:
            value = uuid.UUID(uuid_text)
        except ValueError:
            raise NotFound() from None
        campaign = get_object_or_404(
            Campaign.objects.live().filter(organization=self.organization), uuid=value
        )
        return Response({"data": campaign_report_data(selectors.campaign_report(campaign))})
