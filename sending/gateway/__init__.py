"""The channel gateway: which implementation an organization sends through.

`gateway_for(organization)` is the only way the rest of the service gets one.
"""

from accounts.models import Organization
from sending.gateway.base import (
    ChannelNotConfigured,
    FailureKind,
    Gateway,
    GatewayError,
    MediaTooLarge,
)
from sending.gateway.cloud_api import CloudApiGateway
from sending.gateway.sandbox import SandboxGateway
from sending.models import Channel, ChannelKind

__all__ = [
    "ChannelNotConfigured",
    "CloudApiGateway",
    "FailureKind",
    "Gateway",
    "GatewayError",
    "MediaTooLarge",
    "SandboxGateway",
    "gateway_for",
]


def gateway_for(organization: Organization) -> Gateway:
    """The sandbox, or the Cloud API client once the organization's credentials are set.

    Raises ChannelNotConfigured for an organization switched to the Cloud API whose
    phone number id or access token is missing: sending elsewhere would surprise it.
    """
    channel = Channel.of(organization)
    if channel.kind != ChannelKind.CLOUD_API:
        return SandboxGateway(organization_id=organization.pk)
    if not channel.can_send_through_cloud_api:
        raise ChannelNotConfigured()
    return CloudApiGateway(
        phone_number_id=channel.phone_number_id,
        access_token=channel.access_token,
        business_account_id=channel.business_account_id,
    )
