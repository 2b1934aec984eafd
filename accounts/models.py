"""Organizations (the tenants), their API tokens and their staff members."""

import uuid
from typing import TypeVar

from django.conf import settings
from django.db import models
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Organization(models.Model):
    """A tenant. Its WhatsApp channel settings belong to sending (sending.models.Channel)."""

    uuid = models.UUIDField(_("uuid"), default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(_("name"), max_length=255, unique=True)
    rate_limit = models.PositiveIntegerField(
        _("rate limit"),
        null=True,
        blank=True,
        help_text=_("Requests per minute; empty for the API_RATE_LIMIT default."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("organization")
        verbose_name_plural = _("organizations")

    def __str__(self) -> str:
        return self.name


_M = TypeVar("_M", bound=models.Model)


class LiveQuerySet(models.QuerySet[_M]):
    def live(self):
        return self.filter(deleted_at__isnull=True)

    def update_live(self, record: models.Model, **values) -> None:
        """Write `values` to `record`'s row in one UPDATE that applies only while the row is
        live, and to `record` too; a soft delete is `update_live(record, deleted_at=now)`.

        A record deleted meanwhile is not found (Http404: the views' and the admin's
        404). A save() would instead write back every field as it was read, the
        `deleted_at = NULL` of a concurrent delete and other requests' edits included.
        On PostgreSQL a concurrent delete not yet committed makes this wait, then count
        no row. `updated_at` is set here: auto_now does not fire on update().
        """
        if any(field.name == "updated_at" for field in self.model._meta.concrete_fields):
            values.setdefault("updated_at", timezone.now())
        if not self.live().filter(pk=record.pk).update(**values):
            raise Http404(f"No live {self.model._meta.verbose_name} {record.pk}.")
        for name, value in values.items():
            setattr(record, name, value)


class OrganizationRecord(models.Model):
    """What every tenant record has: a public uuid, its organization, soft deletion."""

    uuid = models.UUIDField(_("uuid"), default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, verbose_name=_("organization")
    )
    created_by = models.PositiveIntegerField(
        _("created by"), default=0, help_text=_("0 for the API, else a user id.")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    deleted_at = models.DateTimeField(_("deleted at"), null=True, blank=True)

    objects = LiveQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["id"]


class ApiToken(models.Model):
    """A bearer token. Only its public prefix and a SHA-256 digest are stored."""

    organization = models.ForeignKey(
        Organization,
        on_delete=models.CASCADE,
        related_name="tokens",
        verbose_name=_("organization"),
    )
    name = models.CharField(_("name"), max_length=255, blank=True)
    prefix = models.CharField(_("prefix"), max_length=16, unique=True)
    digest = models.CharField(_("digest"), max_length=64)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.prefix} ({self.name})" if self.name else self.prefix

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Role(models.TextChoices):
    """What a staff member may do in the admin (docs/inbox.md, "Roles")."""

    # Everything staff can do; the default, so staff from before roles keep their rights.
    MANAGER = "manager", _("manager")
    # The inbox, contacts, and canned replies and templates to use but not edit.
    AGENT = "agent", _("agent")


class Membership(models.Model):
    """A staff user belongs to exactly one organization, with one role."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="membership",
        verbose_name=_("user"),
    )
    organization = models.ForeignKey(
        Organization,
        on_delete=models.CASCADE,
        related_name="members",
        verbose_name=_("organization"),
    )
    role = models.CharField(_("role"), max_length=16, choices=Role.choices, default=Role.MANAGER)

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")

    def __str__(self) -> str:
        return f"{self.user} @ {self.organization}"


class StaffMember(Membership):
    """A membership as a manager sees it in the admin: their organization's staff, whose
    roles they set (superusers manage every membership on its own page)."""

    class Meta:
        proxy = True
        verbose_name = _("staff member")
        verbose_name_plural = _("staff members")


class AdminLanguage(models.Model):
    """The language a staff member chose in the admin's header (docs/admin.md,
    "Languages"): theirs on every device they log in from, whatever the browser says."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="admin_language",
        verbose_name=_("user"),
    )
    language = models.CharField(_("language"), max_length=16, choices=settings.LANGUAGES)

    class Meta:
        verbose_name = _("admin language")
        verbose_name_plural = _("admin languages")

    def __str__(self) -> str:
        return f"{self.user}: {self.language}"
