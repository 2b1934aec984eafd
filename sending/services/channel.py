"""The channel settings: the sandbox, or the Cloud API with its credentials."""

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.models import Organization
from sending.models import Channel, ChannelKind

ID_PATTERN = re.compile(r"^[0-9]{1,32}$")
SECRET_PATTERN = re.compile(r"^\S{1,1024}$")
# In English, the API's language; marked so that the admin shows them translated.
NOT_ONE_WORD = {
    "app_secret": gettext_noop("The app secret must be one word without spaces."),
    "verify_token": gettext_noop("The verify token must be one word without spaces."),
}
TOO_LONG = {
    "app_secret": gettext_noop("The app secret must be at most 255 characters."),
    "verify_token": gettext_noop("The verify token must be at most 255 characters."),
}


def configure_channel(
    *,
    organization: Organization,
    sandbox: bool = False,
    phone_number_id: str | None = None,
    access_token: str | None = None,
    business_account_id: str | None = None,
    app_secret: str | None = None,
    verify_token: str | None = None,
) -> Channel:
    """Switch an organization to the sandbox, or to the Cloud API with its credentials.

    The sandbox clears every stored credential. For the Cloud API, the phone number id
    and access token are required; the optional settings not given keep their value.
    Bad input changes nothing. Returns the saved settings, which `organization` then
    carries too (`Channel.of(organization)` needs no query).
    """
    optional = {
        "business_account_id": business_account_id,
        "app_secret": app_secret,
        "verify_token": verify_token,
    }
    if sandbox:
        if phone_number_id or access_token or any(v is not None for v in optional.values()):
            raise ValidationError(
                {
                    "sandbox": [
                        gettext_noop(
                            "The sandbox takes no credentials; give either --sandbox or them."
                        )
                    ]
                }
            )
        values = {"kind": ChannelKind.SANDBOX, "phone_number_id": "", "access_token": ""}
        values.update(dict.fromkeys(optional, ""))
        return save_channel(organization, values)

    errors: dict[str, list[str]] = {}
    if not phone_number_id:
        errors["phone_number_id"] = [
            gettext_noop("The phone number id is required for the Cloud API.")
        ]
    elif not ID_PATTERN.match(phone_number_id):
        errors["phone_number_id"] = [gettext_noop("The phone number id must be digits.")]
    if not access_token:
        errors["access_token"] = [gettext_noop("The access token is required for the Cloud API.")]
    elif not SECRET_PATTERN.match(access_token):
        errors["access_token"] = [
            gettext_noop("The access token must be one word of at most 1024 characters.")
        ]
    if business_account_id is not None and not ID_PATTERN.match(business_account_id):
        errors["business_account_id"] = [gettext_noop("The business account id must be digits.")]
    for field in ("app_secret", "verify_token"):
        value = optional[field]
        if value is not None and not SECRET_PATTERN.match(value):
            errors[field] = [NOT_ONE_WORD[field]]
        elif value is not None and len(value) > 255:
            errors[field] = [TOO_LONG[field]]
    if errors:
        raise ValidationError(errors)

    values = {
        "kind": ChannelKind.CLOUD_API,
        "phone_number_id": phone_number_id,
        "access_token": access_token,
    }
    values.update({field: value for field, value in optional.items() if value is not None})
    return save_channel(organization, values)


def save_channel(organization: Organization, values: dict[str, Any]) -> Channel:
    """Write `values` to the organization's row, created if it has none yet. The row is
    locked while it changes, so two concurrent saves cannot mix their settings."""
    with transaction.atomic():
        channel, _ = Channel.objects.select_for_update().get_or_create(organization=organization)
        for field, value in values.items():
            setattr(channel, field, value)
        channel.save()
    channel.organization = organization  # and the organization's cached settings are these
    return channel


def set_service_window(*, organization: Organization, enforce: bool) -> Channel:
    """Turn the 24-hour customer-service window's check on or off (sending/services/
    refusals.py). Kept on the channel's row, created (the sandbox) if it has none."""
    return save_channel(organization, {"enforce_service_window": enforce})
