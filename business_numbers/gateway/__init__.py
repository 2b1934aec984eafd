"""The channel gateway: which implementation a number sends through.

`gateway_for(number)` is the only way the rest of the service gets one.
"""

from business_numbers.gateway.base import (
    ChannelNotConfigured,
    FailureKind,
    Gateway,
    GatewayError,
    MediaTooLarge,
    NotWritten,
)
from business_numbers.gateway.cloud_api import CloudApiGateway
from business_numbers.gateway.sandbox import SandboxGateway, approved_templates
from business_numbers.models import Number, NumberKind

__all__ = [
    "ChannelNotConfigured",
    "CloudApiGateway",
    "FailureKind",
    "Gateway",
    "GatewayError",
    "MediaTooLarge",
    "NotWritten",
    "SandboxGateway",
    "gateway_for",
]


def gateway_for(number: Number) -> Gateway:
    """The sandbox, or the Cloud API client once the number's credentials are set.

    Raises ChannelNotConfigured for a number switched to the Cloud API whose phone
    number id or access token is missing: sending elsewhere would surprise it.
    """
    if number.kind != NumberKind.CLOUD_API:
        return SandboxGateway(
            organization_id=number.organization_id,
            number_id=number.pk,
            templates=approved_templates(number.pk),
        )
    if not number.can_send_through_cloud_api:
        raise ChannelNotConfigured()
    return CloudApiGateway(
        phone_number_id=number.phone_number_id,
        access_token=number.access_token,
        business_account_id=number.business_account_id,
    )
