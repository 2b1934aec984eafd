"""Writes and look-ups for organizations, tokens and staff; used by commands, API and admin."""

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Permission
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts import queries, tokens
from accounts.models import AdminLanguage, ApiToken, Membership, Organization, Role

# last_used_at is refreshed at most this often, so a busy token is not a write per request.
LAST_USED_RESOLUTION = timedelta(minutes=1)
# Apps whose records staff members manage in the admin.
STAFF_APPS = (
    "contacts",
    "canned_replies",
    "business_numbers",
    "sending",
    "campaigns",
    "events",
    "inbox",
)


class NotFound(ObjectDoesNotExist):
    """No organization or token matches; commands show it as an error line."""


@dataclass(frozen=True)
class IssuedToken:
    token: str  # the plaintext, shown once
    record: ApiToken


def create_organization(*, name: str, rate_limit: int | None = None) -> Organization:
    name = name.strip()
    if not name:
        raise ValidationError({"name": [gettext_noop("The name must not be empty.")]})
    if len(name) > 255:
        raise ValidationError({"name": [gettext_noop("The name must be at most 255 characters.")]})
    if rate_limit is not None and rate_limit < 1:
        raise ValidationError({"rate_limit": [gettext_noop("The rate limit must be at least 1.")]})
    if Organization.objects.filter(name=name).exists():
        taken = gettext_noop("An organization named %(name)r already exists.")
        raise ValidationError({"name": [ValidationError(taken, params={"name": name})]})
    return Organization.objects.create(name=name, rate_limit=rate_limit)


def find_organization(reference: str) -> Organization:
    """By uuid or by exact name."""
    try:
        return Organization.objects.get(uuid=uuid.UUID(reference))
    except (ValueError, Organization.DoesNotExist):
        pass
    try:
        return Organization.objects.get(name=reference)
    except Organization.DoesNotExist:
        raise NotFound(f"No organization has the uuid or name {reference!r}.") from None


def issue_token(*, organization: Organization, name: str = "") -> IssuedToken:
    token, prefix, digest = tokens.new_token()
    record = ApiToken.objects.create(
        organization=organization, name=name.strip()[:255], prefix=prefix, digest=digest
    )
    return IssuedToken(token=token, record=record)


def import_token(*, organization: Organization, token: str, name: str = "") -> ApiToken:
    """Keep a token the original product issued, hashed like ours (accounts/tokens.py), so
    its clients go on with it; a ValidationError when it is too short, not a bearer
    token's characters, one of ours, or known already."""
    token = token.strip()
    if token.startswith("wam_"):
        refused = gettext_noop("This is one of this service's own tokens; it needs no import.")
        raise ValidationError({"token": [refused]})
    if len(token) < tokens.IMPORTED_MIN_LENGTH:
        short = gettext_noop("The token is too short: at least %(length)s characters.")
        params = {"length": tokens.IMPORTED_MIN_LENGTH}
        raise ValidationError({"token": [ValidationError(short, params=params)]})
    if not tokens.is_importable(token):
        refused = gettext_noop(
            "The token must be at most %(length)s printable characters, without spaces."
        )
        params = {"length": tokens.IMPORTED_MAX_LENGTH}
        raise ValidationError({"token": [ValidationError(refused, params=params)]})
    prefix = tokens.imported_prefix(token)
    known = gettext_noop("This token is known already (%(prefix)s).")
    if ApiToken.objects.filter(prefix=prefix).exists():
        raise ValidationError({"token": [ValidationError(known, params={"prefix": prefix})]})
    try:
        with transaction.atomic():
            return ApiToken.objects.create(
                organization=organization,
                name=name.strip()[:255],
                prefix=prefix,
                digest=tokens.digest_of(token),
            )
    except IntegrityError:  # imported meanwhile by another run
        raise ValidationError(
            {"token": [ValidationError(known, params={"prefix": prefix})]}
        ) from None


def find_token(token_or_prefix: str) -> ApiToken:
    """By the whole token (checked against its digest) or by its public prefix."""
    text = token_or_prefix.strip()
    prefix = tokens.prefix_of(text) or text
    record = ApiToken.objects.select_related("organization").filter(prefix=prefix).first()
    if record is None or (text != prefix and not tokens.digest_matches(text, record.digest)):
        raise NotFound("No token matches that token or prefix.")
    return record


def revoke_token(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def authenticate_token(token: str) -> ApiToken | None:
    """The active token for a bearer string, or None. Constant-time digest comparison."""
    prefix = tokens.prefix_of(token)
    if prefix is None:
        return None
    record = queries.active_token(prefix)
    if record is None or not tokens.digest_matches(token, record.digest):
        return None
    now = timezone.now()
    if record.last_used_at is None or now - record.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=record.pk).update(last_used_at=now)
        record.last_used_at = now
    return record


@transaction.atomic
def set_staff_role(*, membership: Membership, role: str) -> Membership:
    """A staff member's new role (manager or agent)."""
    if role not in Role.values:
        unknown = gettext_noop("Unknown role %(role)r: use one of %(roles)s.")
        params = {"role": role, "roles": ", ".join(Role.values)}
        raise ValidationError({"role": [ValidationError(unknown, params=params)]})
    Membership.objects.filter(pk=membership.pk).update(role=role)
    membership.role = role
    return membership


def create_staff_user(
    *, username: str, organization: Organization, password: str, role: str = Role.MANAGER
):
    User = get_user_model()
    if role not in Role.values:
        unknown = gettext_noop("Unknown role %(role)r: use one of %(roles)s.")
        params = {"role": role, "roles": ", ".join(Role.values)}
        raise ValidationError({"role": [ValidationError(unknown, params=params)]})
    if User.objects.filter(username=username).exists():
        taken = gettext_noop("A user named %(username)r already exists.")
        raise ValidationError({"username": [ValidationError(taken, params={"username": username})]})
    user = User(username=username, is_staff=True)
    user.full_clean(exclude=["password"])
    # AUTH_PASSWORD_VALIDATORS, the user's attributes known (a password like the
    # username is refused): the command and the admin both come here.
    try:
        password_validation.validate_password(password, user)
    except ValidationError as error:
        raise ValidationError({"password": error.messages}) from None
    user.set_password(password)
    user.save()
    Membership.objects.create(user=user, organization=organization, role=role)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=STAFF_APPS))
    return user


def set_admin_language(*, user, language: str) -> None:
    """Remember the admin language a staff member chose (one of settings.LANGUAGES)."""
    if language not in dict(settings.LANGUAGES):
        unknown = gettext_noop("Unknown language %(language)r: use one of %(languages)s.")
        params = {"language": language, "languages": ", ".join(dict(settings.LANGUAGES))}
        raise ValidationError({"language": [ValidationError(unknown, params=params)]})
    AdminLanguage.objects.update_or_create(user=user, defaults={"language": language})


def admin_language(user) -> str | None:
    """The admin language the staff member chose, if they did."""
    return AdminLanguage.objects.filter(user=user).values_list("language", flat=True).first()
