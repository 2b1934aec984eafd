"""Canned replies: a trigger text, how it must match, and the reply to send."""

import json

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from accounts.models import OrganizationRecord


class MatchCriteria(models.TextChoices):
    CONTAINS = "contains", _("contains")
    EXACT_MATCH = "exact match", _("exact match")
    STARTS_WITH = "starts with", _("starts with")
    ENDS_WITH = "ends with", _("ends with")
    # The exact id of a tapped reply button or list row, or a quick-reply button's payload.
    BUTTON = "button", _("button")


class ResponseType(models.TextChoices):
    TEXT = "text", _("text")
    # A media reply: `response` is the URL WhatsApp fetches the file from (docs/media.md).
    IMAGE = "image", _("image")
    AUDIO = "audio", _("audio")
    DOCUMENT = "document", _("document")
    VIDEO = "video", _("video")
    # `response` is the JSON text of WhatsApp's interactive object: buttons, a list...
    INTERACTIVE = "interactive", _("interactive")


MEDIA_RESPONSE_TYPES = (
    ResponseType.IMAGE,
    ResponseType.AUDIO,
    ResponseType.DOCUMENT,
    ResponseType.VIDEO,
)


class CannedReply(OrganizationRecord):
    name = models.CharField(_("name"), max_length=255)
    trigger = models.CharField(_("trigger"), max_length=255)
    match_criteria = models.CharField(
        _("match criteria"), max_length=16, choices=MatchCriteria.choices
    )
    # {"type": "text", "data": {"text": "<reply>"}}; returned JSON-encoded, as api.md shows.
    # A media reply: {"type": "image", "data": {"link": "<url>"}} (canned_replies.services);
    # an interactive one: {"type": "interactive", "data": {"interactive": {...}}}.
    metadata = models.JSONField(_("metadata"))
    deleted_by = models.PositiveIntegerField(_("deleted by"), null=True, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("canned reply")
        verbose_name_plural = _("canned replies")
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
        """The `response` as the API takes it: the reply's text, a media reply's URL, or
        an interactive reply's object as JSON text."""
        data = self.metadata.get("data", {})
        if self.response_type == ResponseType.INTERACTIVE:
            return json.dumps(data.get("interactive", {}), ensure_ascii=False)
        return data.get("link", "") if self.media_type else data.get("text", "")

    @property
    def send_type(self) -> str:
        """What a match sends besides plain text: a media type, or `interactive`; empty
        for a text reply."""
        if self.response_type == ResponseType.INTERACTIVE:
            return ResponseType.INTERACTIVE
        return self.media_type

    @property
    def media_type(self) -> str:
        """The media type a match answers with; empty for a text reply."""
        return self.response_type if self.response_type in MEDIA_RESPONSE_TYPES else ""
