"""The channel settings: the sandbox, or the Cloud API with its credentials."""

import re

from django.core.exceptions import ValidationError

from accounts.models import Channel, Organization

ID_PATTERN = re.compile(r"^[0-9]{1,32}$")
SECRET_PATTERN = re.compile(r"^\S{1,1024}$")


def configure_channel(
    *,
    organization: Organization,
    sandbox: bool = False,
    phone_number_id: str | None = None,
    access_token: str | None = None,
    business_account_id: str | None = None,
    app_secret: str | None = None,
    verify_token: str | None = None,
) -> Organization:
    """Switch an organization to the sandbox, or to the Cloud API with its credentials.

    The sandbox clears every stored credential. For the Cloud API, the phone number id
    and access token are required; the optional settings not given keep their value.
    """
    optional = {
        "business_account_id": business_account_id,
        "app_secret": app_secret,
        "verify_token": verify_token,
    }
    if sandbox:
        if phone_number_id or access_token or any(v is not None for v in optional.values()):
            raise ValidationError(
                {"sandbox": ["The sandbox takes no credentials; give either --sandbox or them."]}
            )
        organization.channel = Channel.SANDBOX
        for field in ("phone_number_id", "access_token", *optional):
            setattr(organization, field, "")
        organization.save()
        return organization

    errors: dict[str, list[str]] = {}
    if not phone_number_id:
        errors["phone_number_id"] = ["The phone number id is required for the Cloud API."]
    elif not ID_PATTERN.match(phone_number_id):
        errors["phone_number_id"] = ["The phone number id must be digits."]
    if not access_token:
        errors["access_token"] = ["The access token is required for the Cloud API."]
    elif not SECRET_PATTERN.match(access_token):
        errors["access_token"] = ["The access token must be one word of at most 1024 characters."]
    if business_account_id is not None and not ID_PATTERN.match(business_account_id):
        errors["business_account_id"] = ["The business account id must be digits."]
    for field in ("app_secret", "verify_token"):
        value = optional[field]
        if value is not None and not SECRET_PATTERN.match(value):
            errors[field] = [f"The {field.replace('_', ' ')} must be one word without spaces."]
        elif value is not None and len(value) > 255:
            errors[field] = [f"The {field.replace('_', ' ')} must be at most 255 characters."]
    if errors:
        raise ValidationError(errors)

    organization.channel = Channel.CLOUD_API
    organization.phone_number_id = phone_number_id
    organization.access_token = access_token
    for field, value in optional.items():
        if value is not None:
            setattr(organization, field, value)
    organization.save()
    return organization
