"""An organization's WhatsApp numbers and the message templates each number sends.

An organization has one or more numbers (docs/numbers.md); one of them is its default,
which also keeps the organization's Meta app secret and verify token (one webhook URL
per organization). An organization that never configured a number gets a sandbox number
as its default the first time one is needed (`Number.objects.default_for`).
"""

import functools

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, models, transaction
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import LiveQuerySet, Organization, OrganizationRecord
from messaging_project.core import rows
from messaging_project.core.encryption import EncryptedTextField

LIVE = Q(deleted_at__isnull=True)
# Where an Organization instance keeps its live numbers once read (`numbers_of`).
NUMBERS_CACHE = "_live_numbers"


class NumberKind(models.TextChoices):
    SANDBOX = "sandbox", _("Sandbox (messages stay on this server)")
    CLOUD_API = "cloud_api", _("WhatsApp Cloud API")


class QualityRating(models.TextChoices):
    GREEN = "GREEN", _("green")
    YELLOW = "YELLOW", _("yellow")
    RED = "RED", _("red")
    UNKNOWN = "UNKNOWN", _("unknown")


class NumberQuerySet(LiveQuerySet["Number"]):
    def default_for(self, organization: Organization) -> "Number":
        """The organization's default number; a sandbox number, created now, when it has
        none yet (an organization that never configured one). Read once per instance."""
        for number in numbers_of(organization):
            if number.is_default:
                return number
        try:
            with transaction.atomic():
                number = self.create(
                    organization=organization, kind=NumberKind.SANDBOX, is_default=True
                )
        except IntegrityError:  # created meanwhile by a concurrent request
            number = self.live().get(organization=organization, is_default=True)
        number.organization = organization
        setattr(organization, NUMBERS_CACHE, [*numbers_of(organization), number])
        return number


def numbers_of(organization: Organization) -> list["Number"]:
    """The organization's live numbers, default first, read once per instance (the
    webhook's statement loads them with the organization)."""
    cached = getattr(organization, NUMBERS_CACHE, None)
    if cached is None:
        cached = live_numbers(organization.pk)
        for number in cached:
            number.organization = organization
        setattr(organization, NUMBERS_CACHE, cached)
    return cached


# Every send and every webhook routes by the organization's numbers: written out, as the
# ORM's compiling cost four times the read itself (1.8 against 0.36 ms of CPU a call,
# in-process on PostgreSQL).
@functools.cache
def live_numbers_sql() -> str:
    return (
        f"SELECT {rows.columns(Number, 'n')} FROM {Number._meta.db_table} n "  # noqa: S608
        "WHERE n.organization_id = %s AND n.deleted_at IS NULL ORDER BY n.is_default DESC, n.id"
    )


def live_numbers(organization_id: int) -> list["Number"]:
    """The organization's live numbers, default first, in one written-out statement."""
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        cursor.execute(live_numbers_sql(), [organization_id])
        return [rows.instance(Number, db, row) for row in cursor.fetchall()]


def default_of(organization: Organization) -> "Number | None":
    """The organization's default number if it has one (none created)."""
    return next((number for number in numbers_of(organization) if number.is_default), None)


def forget_numbers(organization: Organization) -> None:
    """Drop the instance's cached numbers after they changed."""
    if hasattr(organization, NUMBERS_CACHE):
        delattr(organization, NUMBERS_CACHE)


class Number(OrganizationRecord):
    """One WhatsApp number of an organization: the sandbox, or a Cloud API number with its
    credentials, and its health as WhatsApp last reported it.

    Written by business_numbers.services (the API, the admin, `configure_channel`). A
    deleted number is soft-deleted: its chats keep naming it.
    """

    # Never shown back by the API, the admin or the logs.
    SECRET_FIELDS = ("access_token", "app_secret", "verify_token")

    organization = models.ForeignKey(
        Organization,
        on_delete=models.CASCADE,
        related_name="numbers",
        verbose_name=_("organization"),
    )
    label = models.CharField(_("label"), max_length=100, blank=True, default="")
    kind = models.CharField(
        _("channel"), max_length=16, choices=NumberKind.choices, default=NumberKind.SANDBOX
    )
    is_default = models.BooleanField(_("default"), default=False)
    phone_number_id = models.CharField(_("phone number id"), max_length=32, blank=True, default="")
    business_account_id = models.CharField(
        _("business account id"), max_length=32, blank=True, default=""
    )
    # Encrypted at rest (docs/operations.md): never filter on them, compare in Python.
    access_token = EncryptedTextField(_("access token"), blank=True, default="")
    # The organization's Meta app secret and verify token: read from its default number
    # only, and carried over when another number becomes the default.
    app_secret = EncryptedTextField(_("app secret"), blank=True, default="")
    verify_token = EncryptedTextField(_("verify token"), blank=True, default="")
    # The number's health as WhatsApp last reported it (docs/webhooks.md): written from
    # the webhook's account fields, read by campaigns before they send.
    display_phone_number = models.CharField(
        _("display phone number"), max_length=32, blank=True, default=""
    )
    verified_name = models.CharField(_("verified name"), max_length=255, blank=True, default="")
    quality_rating = models.CharField(
        _("quality rating"),
        max_length=16,
        choices=QualityRating.choices,
        default=QualityRating.UNKNOWN,
    )
    # WhatsApp's tier name (TIER_250, TIER_1K, ... TIER_UNLIMITED); empty when not known.
    messaging_limit = models.CharField(_("messaging limit"), max_length=32, blank=True, default="")
    # ACTIVE, RESTRICTED, BANNED, ...; empty until WhatsApp says.
    account_status = models.CharField(_("account status"), max_length=32, blank=True, default="")
    restrictions = models.JSONField(_("restrictions"), default=list, blank=True)
    # The business account's latest alerts (account_alerts), newest first.
    alerts = models.JSONField(_("alerts"), default=list, blank=True)
    health_updated_at = models.DateTimeField(_("health updated at"), null=True, blank=True)
    # Each health field's last news time (unix seconds, WhatsApp's `entry.time`): older
    # news leaves the field alone (inbound/services/account_news.py).
    news_times = models.JSONField(_("news times"), default=dict, blank=True)
    # Refuse free-form sends outside the 24-hour customer-service window (off: as the
    # original product, WhatsApp itself refuses them).
    enforce_service_window = models.BooleanField(_("enforce the service window"), default=False)

    # The abstract base's manager replaced, as Django allows; the plugin reads the base's
    # as a class variable.
    objects = NumberQuerySet.as_manager()  # type: ignore[misc]

    class Meta(OrganizationRecord.Meta):
        ordering = ["-is_default", "id"]
        verbose_name = _("WhatsApp number")
        verbose_name_plural = _("WhatsApp numbers")
        constraints = [
            # A phone number id belongs to one organization only (and once to it).
            models.UniqueConstraint(
                fields=["phone_number_id"],
                condition=LIVE & ~Q(phone_number_id=""),
                name="unique_live_phone_number_id",
            ),
            models.UniqueConstraint(
                fields=["organization"],
                condition=LIVE & Q(is_default=True),
                name="one_default_number",
            ),
        ]

    def __str__(self) -> str:
        name = self.label or self.display_phone_number or self.phone_number_id
        return name or gettext("%(channel)s of %(organization)s") % {
            "channel": self.get_kind_display(),
            "organization": self.organization,
        }

    @property
    def can_send_through_cloud_api(self) -> bool:
        return bool(self.phone_number_id and self.access_token)


class MessageTemplate(OrganizationRecord):
    """A WhatsApp message template of a number's business account, as `sync_templates`
    last saw it.

    `components` is Graph's list (HEADER, BODY, FOOTER, BUTTONS). A template that
    disappeared from the channel is soft-deleted; it comes back if it reappears.
    """

    number = models.ForeignKey(
        Number, on_delete=models.RESTRICT, related_name="templates", verbose_name=_("number")
    )
    name = models.CharField(_("name"), max_length=512)
    language = models.CharField(_("language"), max_length=16)
    category = models.CharField(_("category"), max_length=32, blank=True, default="")
    status = models.CharField(_("status"), max_length=32, blank=True, default="")
    # Why WhatsApp gave the status (e.g. a rejection's reason), and its quality score.
    reason = models.CharField(_("reason"), max_length=255, blank=True, default="")
    quality = models.CharField(_("quality"), max_length=32, blank=True, default="")
    components = models.JSONField(_("components"), default=list, blank=True)
    external_id = models.CharField(_("external id"), max_length=64, blank=True, default="")
    # Each field's last news time (unix seconds, WhatsApp's `entry.time`): older news
    # leaves the field alone (inbound/services/account_news.py).
    news_times = models.JSONField(_("news times"), default=dict, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("message template")
        verbose_name_plural = _("message templates")
        constraints = [
            models.UniqueConstraint(
                fields=["number", "name", "language"], name="unique_number_template_language"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.language})"

    def component(self, kind: str) -> dict | None:
        """The first component of a kind (`BODY`, `HEADER`, ...), or None."""
        for component in self.components or []:
            if isinstance(component, dict) and str(component.get("type", "")).upper() == kind:
                return component
        return None
