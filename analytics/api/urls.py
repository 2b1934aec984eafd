from django.urls import re_path

from analytics.api.views import AgentsView, CampaignReportView, MessagesView

urlpatterns = [
    re_path(r"^analytics/messages/?$", MessagesView.as_view(), name="analytics-messages"),
    re_path(r"^analytics/agents/?$", AgentsView.as_view(), name="analytics-agents"),
    re_path(
        r"^campaigns/(?P<uuid_text>[^/]+)/report/?$",
        CampaignReportView.as_view(),
        name="campaign-report",
    ),
]
