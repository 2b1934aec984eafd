"""Campaigns: one template to many recipients, each recipient a row sent at most once,
and the pace of each number shared by every worker."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from accounts.models import Organization, OrganizationRecord
from business_numbers.models import Number
from contacts.models import Contact, ContactGroup
from sending.models import Chat


class CampaignStatus(models.TextChoices):
    SCHEDULED = "scheduled", pgettext_lazy("campaign status", "scheduled")
    RUNNING = "running", pgettext_lazy("campaign status", "running")
    COMPLETED = "completed", pgettext_lazy("campaign status", "completed")
    CANCELLED = "cancelled", pgettext_lazy("campaign status", "cancelled")
    # Stopped by the number's health or its template (paused_reason); resumed by hand.
    PAUSED = "paused", pgettext_lazy("campaign status", "paused")


class PausedReason(models.TextChoices):
    TEMPLATE_NOT_APPROVED = "template_not_approved", _("the template is not approved")
    QUALITY_RED = "quality_red", _("the number's quality is red")
    ACCOUNT_RESTRICTED = "account_restricted", _("the account is restricted or banned")


class Campaign(OrganizationRecord):
    """A template sent to a contact group or a list of numbers, at `rate` per second.

    The recipients are fixed when it starts (campaigns.services.start_campaign): until
    then a group campaign names its group, a list campaign keeps the numbers as given.
    """

    name = models.CharField(_("name"), max_length=255)
    # The organization's number it goes from (its default unless the campaign said).
    number = models.ForeignKey(
        Number, on_delete=models.RESTRICT, related_name="+", verbose_name=_("number")
    )
    template = models.JSONField(_("template"), help_text=_("As /api/send/template takes it."))
    contact_group = models.ForeignKey(
        ContactGroup,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("contact group"),
    )
    phones = models.JSONField(
        _("phones"), null=True, blank=True, help_text=_("The numbers as given.")
    )
    rate = models.PositiveIntegerField(_("rate"), help_text=_("Messages per second at most."))
    status = models.CharField(
        _("status"),
        max_length=16,
        choices=CampaignStatus.choices,
        default=CampaignStatus.SCHEDULED,
    )
    paused_reason = models.CharField(
        _("paused because"), max_length=32, choices=PausedReason.choices, blank=True, default=""
    )
    scheduled_at = models.DateTimeField(_("scheduled at"), null=True, blank=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("campaign")
        verbose_name_plural = _("campaigns")
        indexes = [models.Index(fields=["organization", "id"], name="campaigns_of_organization")]

    def __str__(self) -> str:
        return self.name


class RecipientStatus(models.TextChoices):
    PENDING = "pending", pgettext_lazy("recipient status", "pending")
    # Claimed: the channel is being called.
    SENDING = "sending", pgettext_lazy("recipient status", "sending")
    # The channel accepted it; the chat's status follows.
    SENT = "sent", pgettext_lazy("recipient status", "sent")
    FAILED = "failed", pgettext_lazy("recipient status", "failed")
    # Opted out, or the campaign was cancelled first.
    SKIPPED = "skipped", pgettext_lazy("recipient status", "skipped")
    # Claimed by a worker that died during the send: WhatsApp may or may not have it.
    UNKNOWN = "unknown", pgettext_lazy("recipient status", "unknown")
    # A new conversation over the number's messaging limit: it goes when the rolling
    # 24 hours allow (campaigns/limits.py).
    WAITING = "waiting", pgettext_lazy("recipient status", "waiting")


class Recipient(models.Model):
    """One number of a campaign. Moves pending -> sending -> sent | failed | skipped
    (or unknown, after a crash), each step a conditional update."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="recipients")
    phone = models.CharField(max_length=64, help_text="Digits, or the input when not a number.")
    contact = models.ForeignKey(
        Contact, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    chat = models.ForeignKey(
        Chat, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=16, choices=RecipientStatus.choices, default=RecipientStatus.PENDING
    )
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    # The worker that claimed it and when: a claim of a worker no longer alive is unknown.
    claimed_by = models.CharField(max_length=255, blank=True, default="")
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # The next pending recipient of a campaign, in order.
            models.Index(
                fields=["campaign", "id"],
                condition=Q(status="pending"),
                name="pending_recipients",
            ),
            models.Index(fields=["campaign", "status"], name="recipients_by_status"),
        ]

    def __str__(self) -> str:
        return f"+{self.phone} ({self.status})"


class SendPace(models.Model):
    """A number's turn to send: `next_at` is the earliest moment the next campaign
    message may leave it. Every sender takes its turn here (campaigns/pacing.py), in a
    short transaction holding this row, so however many workers send, each number sends
    at its campaign's rate at most."""

    number = models.OneToOneField(
        Number, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    next_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"Next send of {self.number} at {self.next_at}"


class NewConversation(models.Model):
    """A campaign message to a phone the organization's number had not messaged in the
    last 24 hours, counted against that number's messaging limit (campaigns/limits.py).
    Written under the number's SendPace lock before the message leaves; older than a
    day, deleted by the minutely task."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    number = models.ForeignKey(Number, on_delete=models.CASCADE, related_name="+")
    phone = models.CharField(max_length=64)
    started_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["number", "started_at"], name="new_conversations_by_time"),
            models.Index(fields=["number", "phone"], name="new_conversations_by_phone"),
        ]

    def __str__(self) -> str:
        return f"+{self.phone} at {self.started_at}"


class EndedSender(models.Model):
    """A campaign's sender task past its last claim (campaigns/tasks.py, `end_sender`).
    A sender that ends later counts on those waiting or still claiming to send what is
    pending, and on none of these: the last of two senders ending together sees the
    other's row here, though its task still runs."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    task_id = models.UUIDField(unique=True)

    def __str__(self) -> str:
        return f"Sender {self.task_id} ended"
