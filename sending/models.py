"""The message log: chats (every message sent or received, with its channel status),
the conversations they belong to, their status events, auto-replies and media.

(Over 400 lines: the app's models in one file, where Django and readers look for them.)
"""

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from accounts.models import OrganizationRecord
from business_numbers.models import Number
from contacts.models import Contact

LIVE = Q(deleted_at__isnull=True)


class ChatType(models.TextChoices):
    OUTBOUND = "outbound", _("outbound")
    INBOUND = "inbound", _("inbound")


class ChatStatus(models.TextChoices):
    # An outbound message moves forward only: accepted < sent < delivered < read < played.
    ACCEPTED = "accepted", pgettext_lazy("message status", "accepted")
    HELD_FOR_QUALITY_ASSESSMENT = (
        "held_for_quality_assessment",
        pgettext_lazy("message status", "held for quality assessment"),
    )
    PAUSED = "paused", pgettext_lazy("message status", "paused")
    SENT = "sent", pgettext_lazy("message status", "sent")
    DELIVERED = "delivered", pgettext_lazy("message status", "delivered")
    READ = "read", pgettext_lazy("message status", "read")
    # A voice message the recipient listened to (after read).
    PLAYED = "played", pgettext_lazy("message status", "played")
    FAILED = "failed", pgettext_lazy("message status", "failed")
    RECEIVED = "received", pgettext_lazy("message status", "received")  # an inbound message
    # Kept in a chat's status history only, never its status: WhatsApp's warning about a
    # sent message (a catalog item no longer available) and a message deleted by its user.
    WARNING = "warning", pgettext_lazy("message status", "warning")
    DELETED = "deleted", pgettext_lazy("message status", "deleted")


class ChatSource(models.TextChoices):
    """Who wrote a chat's message (docs/api.md): the contact, this service (the API, an
    auto-reply, a campaign), or the business itself in the WhatsApp Business app."""

    CUSTOMER = "customer", pgettext_lazy("message source", "customer")
    API = "api", pgettext_lazy("message source", "this service")
    BUSINESS_APP = "business_app", pgettext_lazy("message source", "WhatsApp Business app")


class ConversationStatus(models.TextChoices):
    OPEN = "open", pgettext_lazy("conversation status", "open")
    PENDING = "pending", pgettext_lazy("conversation status", "pending")
    RESOLVED = "resolved", pgettext_lazy("conversation status", "resolved")


# WhatsApp's customer-service window: free-form messages for 24 hours after the
# customer's last message.
SERVICE_WINDOW = timedelta(hours=24)


class Conversation(models.Model):
    """One contact's messages with one of the organization's numbers: every chat of the
    pair belongs to it. Created with the pair's first chat (sending/services/
    conversations.py), in the same transaction, and moved by every chat in the same
    statement: an inbound message opens it and counts as unread (docs/inbox.md).
    Staff change its status, assignee and labels through inbox/services.py."""

    uuid = models.UUIDField(_("uuid"), default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, verbose_name=_("organization")
    )
    contact = models.ForeignKey(
        Contact, on_delete=models.CASCADE, related_name="conversations", verbose_name=_("contact")
    )
    number = models.ForeignKey(
        Number, on_delete=models.RESTRICT, related_name="conversations", verbose_name=_("number")
    )
    status = models.CharField(
        _("status"),
        max_length=16,
        choices=ConversationStatus.choices,
        default=ConversationStatus.OPEN,
        db_default=ConversationStatus.OPEN,
    )
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_conversations",
        verbose_name=_("assignee"),
    )
    labels = models.JSONField(_("labels"), default=list, db_default=[], blank=True)
    # Inbound messages since staff last read it.
    unread = models.PositiveIntegerField(_("unread"), default=0, db_default=0)
    # Its live chats, kept with each recording (sending/services/conversations.py): the
    # messages page's total, which counting 10,000 index entries made its dearest part.
    messages = models.PositiveIntegerField(_("messages"), default=0, db_default=0)
    last_message_at = models.DateTimeField(_("last message at"), null=True, blank=True)
    last_inbound_at = models.DateTimeField(_("last inbound message at"), null=True, blank=True)
    # When its status last changed (by staff, or an inbound message reopening it): the
    # upsert tells a reopening from it (sending/queries.py).
    status_changed_at = models.DateTimeField(_("status changed at"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        constraints = [
            models.UniqueConstraint(fields=["contact", "number"], name="unique_conversation")
        ]
        indexes = [
            # The inbox's list: an organization's conversations, newest message first.
            models.Index(
                fields=["organization", "-last_message_at", "-id"], name="conversations_by_time"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.contact} / {self.number}"

    @property
    def window_expires_at(self) -> datetime | None:
        """The end of the customer-service window: 24 hours after the last inbound message."""
        if self.last_inbound_at is None:
            return None
        return self.last_inbound_at + SERVICE_WINDOW


class Chat(OrganizationRecord):
    """One message on the channel. `wam_id` is WhatsApp's id for it (none when a send failed)."""

    wam_id = models.CharField(_("WhatsApp message id"), max_length=255, null=True, blank=True)
    contact = models.ForeignKey(
        Contact, on_delete=models.CASCADE, related_name="chats", verbose_name=_("contact")
    )
    # The organization's number it was sent from or to, and the conversation of that
    # number and the contact.
    number = models.ForeignKey(
        Number, on_delete=models.RESTRICT, related_name="chats", verbose_name=_("number")
    )
    conversation = models.ForeignKey(
        Conversation,
        on_delete=models.CASCADE,
        related_name="chats",
        verbose_name=_("conversation"),
        db_index=False,  # the index (conversation, id) below serves it
    )
    type = models.CharField(
        _("type"), max_length=16, choices=ChatType.choices, default=ChatType.OUTBOUND
    )
    # What the message says, as api.md describes it; returned JSON-encoded.
    metadata = models.JSONField(_("metadata"), default=dict)
    # The media an inbound message carried (api.md's `media_id`): fetched by a task.
    media = models.ForeignKey(
        "ChatMedia",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        db_column="media_id",
        related_name="chats",
        verbose_name=_("media"),
    )
    status = models.CharField(_("status"), max_length=32, choices=ChatStatus.choices)
    # Why a message failed: Graph's error code, its text, and the whole channel_error object.
    error_code = models.IntegerField(_("error code"), null=True, blank=True)
    error_title = models.TextField(_("error title"), blank=True, default="")
    error_details = models.JSONField(_("error details"), null=True, blank=True)
    deleted_by = models.PositiveIntegerField(_("deleted by"), null=True, blank=True)
    source = models.CharField(
        _("source"),
        max_length=16,
        choices=ChatSource.choices,
        default=ChatSource.API,
        db_default=ChatSource.API,
    )
    # The time WhatsApp stamped the message (its `timestamp`): inbound messages, Business
    # app echoes and imported history. Null for sends through this service.
    sent_at = models.DateTimeField(_("sent at"), null=True, blank=True)
    # The channel status the daily figures count the chat at, kept from its first move
    # after they last counted it until they count it again (analytics' fold): null while
    # they are in step. Each update that moves a chat sets it (UNCOUNTED), so a status
    # webhook writes nothing more for the figures than the chat it moves; the database
    # marks the chat in MovedChat as it does. No index reads this column: an update that
    # changes an indexed column (or one a partial index's condition names) cannot stay
    # within its page (a heap-only update) and adds an entry to every index of the chat.
    counted_status = models.CharField(max_length=32, null=True, blank=True, editable=False)

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("chat")
        verbose_name_plural = _("chats")
        constraints = [
            # Status webhooks find a chat by its organization and WhatsApp id.
            models.UniqueConstraint(
                fields=["organization", "wam_id"],
                condition=Q(wam_id__isnull=False),
                name="unique_chat_wam_id",
            )
        ]
        indexes = [
            models.Index(fields=["organization", "id"], condition=LIVE, name="live_chats"),
            # A conversation's messages, newest first (the inbox), and its foreign key;
            # `deleted_at` held too, so that a page and its count read the index alone.
            models.Index(
                fields=["conversation", "id"], include=["deleted_at"], name="conversation_chats"
            ),
            # The customer-service window: a contact's latest inbound message.
            models.Index(
                fields=["contact", "created_at"],
                condition=Q(type="inbound"),
                name="contact_inbound_chats",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.wam_id or self.uuid} ({self.status})"


# An update moving a chat's status keeps the status the figures counted it at, unless
# it already keeps one (an expression's columns read the row as it was before). The raw
# updates of sending/queries.py write the same rule in SQL (KEEP_COUNTED).
UNCOUNTED = Coalesce(F("counted_status"), F("status"))


class MovedChat(models.Model):
    """A chat marked as moved since the figures counted it: one row while its
    `counted_status` is set, the figures' fold finding its chats here (a minute's worth)
    and removing their rows as it counts them.

    Written by the database, not by the code that moves chats: a trigger on the chat
    table adds the row when an update sets `counted_status` on a chat that had none
    (sending/migrations/0024_moved_chats.py), so no writer can forget it, and a status
    moving a chat changes no indexed column of the chat (Chat.counted_status)."""

    chat = models.OneToOneField(
        Chat,
        primary_key=True,
        on_delete=models.CASCADE,
        # The trigger writes the row after the chat's update: nothing to check there.
        db_constraint=False,
        related_name="+",
    )
    # The chat's, kept here so that one organization's fold reads only its own rows.
    organization_id = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["organization_id", "chat"], name="moved_chats")]

    def __str__(self) -> str:
        return f"chat {self.chat_id} moved"


class ChatStatusEvent(models.Model):
    """One status update from the channel's webhook, kept as it came.

    `chat` is empty for a message id we do not know (kept aside, not an error). The
    unique constraint makes a redelivered webhook store nothing twice.
    """

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE)
    chat = models.ForeignKey(
        Chat, null=True, blank=True, on_delete=models.CASCADE, related_name="status_events"
    )
    wam_id = models.CharField(max_length=255)
    status = models.CharField(max_length=32, choices=ChatStatus.choices)
    timestamp = models.DateTimeField(help_text="When the channel says it happened.")
    error_code = models.IntegerField(null=True, blank=True)
    error_title = models.CharField(max_length=255, blank=True, default="")
    error_details = models.JSONField(null=True, blank=True)
    # What WhatsApp said the message costs and which conversation it opened, when it did.
    pricing = models.JSONField(null=True, blank=True)
    conversation = models.JSONField(null=True, blank=True)
    # The send's biz_opaque_callback_data, as the status carried it: it names a send
    # whose outcome is unknown (settle_unknown_sends).
    callback_data = models.CharField(max_length=512, blank=True, default="")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["timestamp", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "wam_id", "status", "timestamp"],
                name="unique_status_event",
            )
        ]
        indexes = [
            models.Index(fields=["organization", "wam_id"], name="status_event_message"),
            # The statuses kept aside for a send whose outcome is unknown.
            models.Index(
                fields=["organization", "callback_data"],
                condition=Q(chat__isnull=True) & ~Q(callback_data=""),
                name="status_event_callback",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.wam_id} {self.status} at {self.timestamp:%Y-%m-%d %H:%M:%S}"


class AutoReplyState(models.TextChoices):
    # Written by the webhook in earlier versions, not tried yet (now the task's first run
    # writes the row, already `sending`).
    PENDING = "pending", pgettext_lazy("auto-reply state", "pending")
    # A task run claimed it: the send may be under way.
    SENDING = "sending", pgettext_lazy("auto-reply state", "sending")
    # The channel failed for now; the next is enqueued.
    RETRYING = "retrying", pgettext_lazy("auto-reply state", "retrying")
    SENT = "sent", pgettext_lazy("auto-reply state", "sent")
    # Refused, not configured, or out of attempts.
    FAILED = "failed", pgettext_lazy("auto-reply state", "failed")
    # A run claimed it and never finished (its worker died during the send): WhatsApp may
    # or may not have sent it, so it is not sent again.
    UNKNOWN = "unknown", pgettext_lazy("auto-reply state", "unknown")


class AutoReply(models.Model):
    """The canned reply owed to one inbound message, and what became of it.

    Written by the first run of the task the webhook enqueued with the inbound chat
    (inbound/auto_replies.py), as its claim. One per inbound chat (the unique constraint makes
    that claim once-only); any other run claims it by a conditional update before calling
    the channel, so it is sent at most once however many times the task runs.
    """

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, verbose_name=_("organization")
    )
    inbound = models.OneToOneField(
        Chat, on_delete=models.CASCADE, related_name="auto_reply", verbose_name=_("inbound")
    )
    canned_reply = models.ForeignKey(
        "canned_replies.CannedReply",
        null=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("canned reply"),
    )
    message = models.TextField(
        _("message"), help_text=_("The reply's text, or a media reply's URL, as matched.")
    )
    # A media reply's type (image, audio, document, video); empty for a text reply.
    media_type = models.CharField(_("media type"), max_length=16, blank=True, default="")
    state = models.CharField(
        _("state"), max_length=16, choices=AutoReplyState.choices, default=AutoReplyState.PENDING
    )
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    reply = models.ForeignKey(
        Chat,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("reply"),
    )
    last_error = models.TextField(_("last error"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("auto-reply")
        verbose_name_plural = _("auto-replies")

    def __str__(self) -> str:
        return f"auto-reply to {self.inbound_id} ({self.state})"


class MediaState(models.TextChoices):
    # Recorded with its message, not fetched yet.
    PENDING = "pending", pgettext_lazy("media state", "pending")
    FETCHING = "fetching", pgettext_lazy("media state", "fetching")  # a task run is downloading it
    # A download failed for now; the next is enqueued.
    RETRYING = "retrying", pgettext_lazy("media state", "retrying")
    # In storage: GET /api/chats/{uuid}/media.
    AVAILABLE = "available", pgettext_lazy("media state", "available")
    # Refused, too large, wrong checksum or out of attempts.
    FAILED = "failed", pgettext_lazy("media state", "failed")


class ChatMedia(models.Model):
    """The file of an inbound image, audio, video, document or sticker, and its download.

    Created with the inbound chat, in the webhook's transaction, together with the task
    that fetches it from the channel into Django's storage (inbound/services/media.py,
    inbound/media.py). `media_id` is WhatsApp's id for it; `sha256` and `mime_type` what
    the webhook said; `file` the stored copy once it is `available`.
    """

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE)
    media_id = models.CharField(max_length=255, help_text="WhatsApp's id of the media.")
    kind = models.CharField(max_length=16, help_text="image, audio, video, document or sticker")
    mime_type = models.CharField(max_length=255, blank=True, default="")
    sha256 = models.CharField(max_length=128, blank=True, default="")
    file_name = models.CharField(
        max_length=255, blank=True, default="", help_text="A document's name, as sent."
    )
    state = models.CharField(max_length=16, choices=MediaState.choices, default=MediaState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    file = models.FileField(max_length=255, blank=True, default="")
    size = models.PositiveBigIntegerField(null=True, blank=True, help_text="Bytes stored.")
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "chat media"

    def __str__(self) -> str:
        return f"{self.kind} {self.media_id} ({self.state})"

    @property
    def status(self) -> str:
        """What the chat record says: pending (until fetched or given up), available, failed."""
        if self.state in (MediaState.AVAILABLE, MediaState.FAILED):
            return self.state
        return MediaState.PENDING


class UnhandledWebhookItem(models.Model):
    """A webhook field the service does not handle, per organization: how often it came
    and the last one as it came (docs/webhooks.md: nothing is dropped unseen).

    Written by one upsert (sending/queries.py), so concurrent deliveries all count."""

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, verbose_name=_("organization")
    )
    field = models.CharField(_("field"), max_length=64)
    count = models.PositiveIntegerField(_("count"), default=0)
    last_payload = models.JSONField(_("last payload"), null=True, blank=True)
    first_seen = models.DateTimeField(_("first seen"))
    last_seen = models.DateTimeField(_("last seen"))

    class Meta:
        ordering = ["-last_seen", "id"]
        verbose_name = _("unhandled webhook item")
        verbose_name_plural = _("unhandled webhook items")
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "field"], name="unique_unhandled_webhook_field"
            )
        ]

    def __str__(self) -> str:
        return f"{self.field} ({self.count})"
