"""Campaigns over the API (docs/campaigns.md). Thin: validate, call the service, shape."""

from rest_framework.decorators import action

from campaigns import services
from campaigns.api.serializers import CampaignInputSerializer
from campaigns.models import Campaign
from campaigns.representations import campaign_data, recipient_data
from campaigns.selectors import campaign_recipients, campaigns_with_counts
from messaging_project.api.exceptions import ApiError
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationViewSet, write_result


class CampaignViewSet(OrganizationViewSet):
    queryset = Campaign.objects.live()
    input_serializer_class = CampaignInputSerializer
    represent = staticmethod(campaign_data)

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.action in ("list", "retrieve"):
            return campaigns_with_counts(queryset)
        return queryset

    @idempotent
    def create(self, request):
        data = self.validated_input()
        campaign = services.create_campaign(organization=self.organization, **data)
        return write_result(campaign)

    @action(detail=True, methods=["get"])
    def recipients(self, request, uuid=None):
        campaign = self.get_object()
        page = self.paginate_queryset(campaign_recipients(campaign))
        return self.get_paginated_response([recipient_data(r) for r in page])

    @action(detail=True, methods=["post"])
    def cancel(self, request, uuid=None):
        campaign = self.get_object()
        services.cancel_campaign(campaign=campaign)
        return write_result(campaign)

    @action(detail=True, methods=["post"])
    def resume(self, request, uuid=None):
        campaign = self.get_object()
        try:
            services.resume_campaign(campaign=campaign)
        except services.CampaignConflict as conflict:
            raise ApiError(409, str(conflict)) from None
        return write_result(campaign)

    @action(detail=True, methods=["post"], url_path="retry-unknown")
    def retry_unknown(self, request, uuid=None):
        campaign = self.get_object()
        try:
            retried = services.retry_unknown(campaign=campaign)
        except services.CampaignConflict as conflict:
            raise ApiError(409, str(conflict)) from None
        response = write_result(campaign)
        response.data["retried"] = retried
        return response
