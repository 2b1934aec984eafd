"""The team inbox's own records: staff's internal notes on a conversation, and each
organization's count of conversations (the conversation itself is sending's: it moves
with every chat)."""

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sending.models import Conversation

NOTE_MAX_LENGTH = 4096


class Note(models.Model):
    """An internal note on a conversation, for staff only: never sent to the customer."""

    uuid = models.UUIDField(_("uuid"), default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, verbose_name=_("organization")
    )
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="notes", verbose_name=_("conversation")
    )
    # Null when written through the API (its tokens are the organization's) or when the
    # staff member was removed since.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("author"),
    )
    body = models.TextField(_("body"), max_length=NOTE_MAX_LENGTH)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("note")
        verbose_name_plural = _("notes")
        indexes = [models.Index(fields=["conversation", "id"], name="conversation_notes")]

    def __str__(self) -> str:
        return self.body[:50]


class ConversationTotal(models.Model):
    """How many conversations an organization has: the total of the API's unfiltered
    list, kept as they are created (inbox/queries.py) instead of counted on each page.
    Conversations are never deleted but with their organization or contact's row.

    And how many times staff or the API changed one (its status, assignee or labels, or
    read it): the admin list's live check reads it with the newest message, so that an
    open list redraws on another's change too (inbox/live.py)."""

    organization = models.OneToOneField(
        "accounts.Organization", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    conversations = models.PositiveBigIntegerField(default=0)
    changes = models.PositiveBigIntegerField(default=0, db_default=0)

    def __str__(self) -> str:
        return f"{self.conversations} conversations"
