"""An organization's numbers: the sandbox, or the Cloud API with its credentials
(docs/numbers.md). `configure_channel` and `set_service_window` write the default
number, as the channel settings did before an organization could have several."""

import re
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import Organization
from business_numbers.models import Number, NumberKind, forget_numbers

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
) -> Number:
    """Switch an organization to the sandbox, or to the Cloud API with its credentials.

    The sandbox clears every stored credential. For the Cloud API, the phone number id
    and access token are required; the optional settings not given keep their value.
    Bad input changes nothing. Returns the saved settings, which `organization` then
    carries too (`Number.objects.default_for(organization)` needs no query).
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
        values: dict[str, Any] = {
            "kind": NumberKind.SANDBOX,
            "phone_number_id": "",
            "access_token": "",
        }
        values.update(dict.fromkeys(optional, ""))
        return save_channel(organization, values)

    errors = cloud_credentials_errors(
        phone_number_id=phone_number_id,
        access_token=access_token,
        business_account_id=business_account_id,
    )
    if business_account_id == "":
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
        "kind": NumberKind.CLOUD_API,
        "phone_number_id": phone_number_id,
        "access_token": access_token,
    }
    values.update({field: value for field, value in optional.items() if value is not None})
    return save_channel(organization, values)


def save_channel(organization: Organization, values: dict[str, Any]) -> Number:
    """Write `values` to the organization's default number, created if it has none yet.
    The row is locked while it changes, so two concurrent saves cannot mix their
    settings; a phone number id another live number has is a NumberConflict."""
    forget_numbers(organization)
    default = Number.objects.default_for(organization)
    phone_number_id = values.get("phone_number_id")
    if phone_number_id:
        check_phone_number_id_free(phone_number_id, but=default)
    with transaction.atomic():
        # No key update: the chats' foreign key checks on this row need not wait.
        number = Number.objects.select_for_update(no_key=True).get(pk=default.pk)
        for field, value in values.items():
            setattr(number, field, value)
        save_unique(number)
    forget_numbers(organization)
    number.organization = organization
    return number


def set_service_window(*, organization: Organization, enforce: bool) -> Number:
    """Turn the 24-hour customer-service window's check on or off (sending/services/
    refusals.py). Kept on the channel's row, created (the sandbox) if it has none."""
    return save_channel(organization, {"enforce_service_window": enforce})


class NumberConflict(ValidationError):
    """A write the organization's numbers refuse as it stands (the API's 409): a phone
    number id another number has, the default number deleted while others exist, a
    number a campaign still needs."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message_text = message
        super().__init__({field: [message]}, code="conflict")


PHONE_NUMBER_ID_TAKEN = gettext_noop(
    "This phone number id is already connected, here or to another organization."
)


def check_phone_number_id_free(phone_number_id: str, *, but: Number | None = None) -> None:
    """A live number other than `but` with this phone number id is a NumberConflict.
    (Checked first for a clear error; the unique index decides a race.)"""
    taken = Number.objects.live().filter(phone_number_id=phone_number_id)
    if but is not None:
        taken = taken.exclude(pk=but.pk)
    if taken.exists():
        raise NumberConflict("phone_number_id", PHONE_NUMBER_ID_TAKEN)


def save_unique(number: Number) -> None:
    """Save, turning the unique index's refusal of a phone number id taken meanwhile (two
    requests at once) into the NumberConflict the check gives."""
    try:
        with transaction.atomic():
            number.save()
    except IntegrityError as error:
        # PostgreSQL names the index, SQLite the column.
        if "phone_number_id" in str(error):
            raise NumberConflict("phone_number_id", PHONE_NUMBER_ID_TAKEN) from error
        raise


def cloud_credentials_errors(
    *, phone_number_id: str | None, access_token: str | None, business_account_id: str | None
) -> dict[str, list[str]]:
    """What is wrong with a Cloud API number's credentials, by field."""
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
    if business_account_id and not ID_PATTERN.match(business_account_id):
        errors["business_account_id"] = [gettext_noop("The business account id must be digits.")]
    return errors


def create_number(
    *,
    organization: Organization,
    label: str = "",
    kind: str = NumberKind.CLOUD_API,
    phone_number_id: str = "",
    business_account_id: str = "",
    access_token: str = "",
    is_default: bool = False,
) -> Number:
    """Add a number to the organization: the sandbox, or a Cloud API number with its
    credentials. `is_default` makes it the default (the organization's first number is
    the default anyway). Bad input is a ValidationError; a phone number id another
    number has is a NumberConflict."""
    if kind == NumberKind.CLOUD_API:
        errors = cloud_credentials_errors(
            phone_number_id=phone_number_id,
            access_token=access_token,
            business_account_id=business_account_id,
        )
        if errors:
            raise ValidationError(errors)
        check_phone_number_id_free(phone_number_id)
    else:
        phone_number_id = business_account_id = access_token = ""
    number = Number(
        organization=organization,
        label=label,
        kind=kind,
        phone_number_id=phone_number_id,
        business_account_id=business_account_id,
        access_token=access_token,
    )
    with transaction.atomic():
        Organization.objects.select_for_update(no_key=True).filter(pk=organization.pk).first()
        has_default = Number.objects.live().filter(organization=organization, is_default=True)
        number.is_default = is_default or not has_default.exists()
        save_unique(number)
        if number.is_default:
            take_default(number)
    forget_numbers(organization)
    return number


def update_number(*, number: Number, **values: Any) -> Number:
    """Change a number's label, credentials or default. Only the fields given change;
    switching a Cloud API number's credentials checks them as creating it does."""
    allowed = {"label", "phone_number_id", "business_account_id", "access_token", "is_default"}
    unknown = set(values) - allowed
    if unknown:
        raise ValidationError({field: ["This field cannot be changed."] for field in unknown})
    with transaction.atomic():
        current = Number.objects.select_for_update(no_key=True).live().get(pk=number.pk)
        if values.get("is_default") is False and current.is_default:
            raise ValidationError({"is_default": ["Make another number the default instead."]})
        for field in ("label", "phone_number_id", "business_account_id", "access_token"):
            if field in values:
                setattr(current, field, values[field])
        if current.kind == NumberKind.CLOUD_API and (
            {"phone_number_id", "business_account_id", "access_token"} & set(values)
        ):
            errors = cloud_credentials_errors(
                phone_number_id=current.phone_number_id,
                access_token=current.access_token,
                business_account_id=current.business_account_id,
            )
            if errors:
                raise ValidationError(errors)
            check_phone_number_id_free(current.phone_number_id, but=current)
        elif current.kind == NumberKind.SANDBOX and any(
            values.get(field) for field in ("phone_number_id", "access_token")
        ):
            raise ValidationError(
                {"kind": ["A sandbox number takes no credentials; add a Cloud API number."]}
            )
        save_unique(current)
        if values.get("is_default") and not current.is_default:
            take_default(current)
    forget_numbers(number.organization)
    return current


def take_default(number: Number) -> None:
    """Make `number` its organization's default: the former default gives it the
    organization's Meta app secret, verify token and service-window setting, which are
    read from the default number. In the caller's transaction."""
    former = (
        Number.objects.live()
        .select_for_update(no_key=True)
        .filter(organization_id=number.organization_id, is_default=True)
        .exclude(pk=number.pk)
        .first()
    )
    if former is not None:
        Number.objects.filter(pk=former.pk).update(is_default=False)
        number.app_secret = former.app_secret
        number.verify_token = former.verify_token
        number.enforce_service_window = former.enforce_service_window
    number.is_default = True
    number.save()


# Asked before a number is deleted, by the apps above that may still need it (campaigns
# register in ready()): each returns why the number cannot go, or None.
DeletionGuard = Callable[[Number], str | None]
DELETION_GUARDS: list[DeletionGuard] = []


def guard_deletion(guard: DeletionGuard) -> None:
    if guard not in DELETION_GUARDS:
        DELETION_GUARDS.append(guard)


def delete_number(*, number: Number) -> None:
    """Soft-delete a number: its chats, conversations and templates keep naming it. The
    default while others exist, or a number something still needs, is a NumberConflict."""
    with transaction.atomic():
        current = Number.objects.select_for_update(no_key=True).live().get(pk=number.pk)
        others = Number.objects.live().filter(organization_id=current.organization_id)
        if current.is_default and others.exclude(pk=current.pk).exists():
            raise NumberConflict(
                "is_default", "Make another number the default before deleting this one."
            )
        for guard in DELETION_GUARDS:
            reason = guard(current)
            if reason:
                raise NumberConflict("number", reason)
        Number.objects.update_live(current, deleted_at=timezone.now())
    forget_numbers(number.organization)
