"""Contacts and contact groups of an organization."""

from django.db import models
from django.db.models import Q

from accounts.models import OrganizationRecord

LIVE = Q(deleted_at__isnull=True)


class ContactGroup(OrganizationRecord):
    name = models.CharField(max_length=255)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(OrganizationRecord.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "name"], condition=LIVE, name="unique_live_group_name"
            )
        ]
        indexes = [models.Index(fields=["organization", "id"], condition=LIVE, name="live_groups")]

    def __str__(self) -> str:
        return self.name


class Contact(OrganizationRecord):
    first_name = models.CharField(max_length=255, null=True, blank=True)
    last_name = models.CharField(max_length=255, null=True, blank=True)
    phone = models.CharField(max_length=20, help_text="Digits only, country code first.")
    email = models.EmailField(max_length=255, null=True, blank=True)
    avatar = models.CharField(max_length=255, null=True, blank=True)
    address = models.JSONField(null=True, blank=True)
    contact_group = models.ForeignKey(
        ContactGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="contacts"
    )
    is_favorite = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(OrganizationRecord.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "phone"], condition=LIVE, name="unique_live_contact_phone"
            )
        ]
        indexes = [
            models.Index(fields=["organization", "id"], condition=LIVE, name="live_contacts")
        ]

    def __str__(self) -> str:
        return self.full_name.strip() or f"+{self.phone}"

    @property
    def full_name(self) -> str:
        return f"{self.first_name or ''} {self.last_name or ''}"


class ContactCount(models.Model):
    """How many live contacts an organization has.

    Kept by contacts.services in the same transaction as every create and delete, so
    an unfiltered contact list reads its exact `meta.total` from one row instead of
    counting up to a million rows per request (docs/performance.md).
    """

    organization = models.OneToOneField(
        "accounts.Organization", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    live = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.live} live contacts"
