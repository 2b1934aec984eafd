from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class QueuedStatuses(models.Model):
    """The status updates of one webhook delivery, kept for the worker to apply
    (WHATSAPP_STATUSES_QUEUED; inbound/queued_statuses.py). Deleted once applied; one
    that could not be applied on its own keeps its `error`, and is left for an operator
    (`tasks_status` counts them; clearing the error puts it back in the queue)."""

    # No foreign key in the database: its check, as each webhook's insert committed,
    # locked the organization's row (FOR KEY SHARE), and overlapping commits made that
    # lock a new MultiXact, about one per two status webhooks. The insert names only an
    # organization whose number it finds; Django still deletes the rows with their
    # organization, and the worker drops a row whose organization is gone.
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    # Each change's value as WhatsApp sent it, with its `statuses` (and its metadata,
    # which the original product's message.status.update body carries).
    changes = models.JSONField()
    received_at = models.DateTimeField(default=timezone.now)
    error = models.TextField(blank=True, default="")

    class Meta:
        verbose_name = _("queued statuses")
        verbose_name_plural = _("queued statuses")
        indexes = [
            # The queue's order: the oldest first, those set aside left out.
            models.Index(
                fields=["id"], name="queued_statuses_waiting", condition=models.Q(error="")
            )
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.received_at:%Y-%m-%d %H:%M:%S}"
