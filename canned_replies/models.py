"""Canned replies: a trigger text, how it must match, and the reply to send."""

from django.db import models
from django.db.models import Q

from accounts.models import OrganizationRecord


class MatchCriteria(models.TextChoices):
    CONTAINS = "contains", "contains"
    EXACT_MATCH = "exact match", "exact match"
    STARTS_WITH = "starts with", "starts with"
    ENDS_WITH = "ends with", "ends with"


class ResponseType(models.TextChoices):
    TEXT = "text", "text"


class CannedReply(OrganizationRecord):
    name = models.CharField(max_length=255)
    trigger = models.CharField(max_length=255)
    match_criteria = models.CharField(max_length=16, choices=MatchCriteria.choices)
    # {"type": "text", "data": {"text": "<reply>"}}; returned JSON-encoded, as api.md shows.
    metadata = models.JSONField()
    deleted_by = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(OrganizationRecord.Meta):
        verbose_name_plural = "canned replies"
        indexes = [
            models.Index(
                fields=["organization", "id"],
                condition=Q(deleted_at__isnull=True),
                name="live_canned_replies",
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def response_type(self) -> str:
        return self.metadata.get("type", ResponseType.TEXT)

    @property
    def response_text(self) -> str:
        return self.metadata.get("data", {}).get("text", "")
