"""Event webhooks: an organization's endpoints, the events emitted, and one delivery per
event and endpoint.

An event is written as one Emission row in the transaction of the change that caused it,
whatever the number of endpoints that want it; a worker soon turns it into one Delivery
per endpoint (events/delivery.py), in one transaction, so it is never lost nor doubled.
A delivery is its own row from then until it succeeds or runs out of attempts; its
`msg_id` is the `webhook-id` of every attempt and its `body` the exact bytes each attempt
signs and sends.
"""

import base64
import secrets
import uuid

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from accounts.models import Organization, OrganizationRecord
from messaging_project.core.encryption import EncryptedTextField


class Event(models.TextChoices):
    MESSAGE_RECEIVED = "message.received", _("Message received")
    MESSAGE_SENT = "message.sent", _("Message sent")
    MESSAGE_STATUS_UPDATE = "message.status.update", _("Message status update")
    MESSAGE_UPDATED = "message.updated", _("Message updated")
    MESSAGE_DELETED = "message.deleted", _("Message deleted")
    HISTORY_IMPORTED = "history.imported", _("History imported")
    CONTACT_CREATED = "contact.created", _("Contact created")
    CONTACT_UPDATED = "contact.updated", _("Contact updated")
    CONTACT_DELETED = "contact.deleted", _("Contact deleted")
    # One per import, when it ends, instead of a contact.created for each of its rows.
    CONTACTS_IMPORTED = "contacts.imported", _("Contacts imported")
    GROUP_CREATED = "group.created", _("Group created")
    GROUP_UPDATED = "group.updated", _("Group updated")
    GROUP_DELETED = "group.deleted", _("Group deleted")
    AUTOREPLY_CREATED = "autoreply.created", _("Canned reply created")
    AUTOREPLY_UPDATED = "autoreply.updated", _("Canned reply updated")
    AUTOREPLY_DELETED = "autoreply.deleted", _("Canned reply deleted")
    WEBHOOK_DISABLED = "webhook.disabled", _("Webhook endpoint turned off")
    TEMPLATE_STATUS_UPDATE = "template.status.update", _("Template status update")
    CHANNEL_UPDATED = "channel.updated", _("Channel updated")
    CONVERSATION_CREATED = "conversation.created", _("Conversation created")
    CONVERSATION_UPDATED = "conversation.updated", _("Conversation updated")


class Format(models.TextChoices):
    """The body an endpoint is posted (docs/events.md): ours, or the original product's
    for receivers written for it."""

    STANDARD = "standard", pgettext_lazy("webhook format", "Standard")
    SWIFTCHATS = "swiftchats", pgettext_lazy("webhook format", "Swiftchats (original product)")


def new_secret() -> str:
    """`whsec_` + base64 of 24 random bytes, as the Standard Webhooks libraries expect."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


class Endpoint(OrganizationRecord):
    url = models.CharField(_("URL"), max_length=2048)
    # The events it is sent; empty: all of them.
    events = models.JSONField(_("events"), default=list, blank=True)
    # Plain for now; the encrypted field type replaces it (docs/operations.md). Read and
    # written through the model only, so that the switch is the field's alone.
    # Encrypted at rest (docs/operations.md): never filter on them, compare in Python.
    secret = EncryptedTextField(_("secret"), default=new_secret)
    # After a rotation the old secret still signs, next to the new one, until then.
    previous_secret = EncryptedTextField(_("previous secret"), blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(
        _("previous secret expires at"), null=True, blank=True
    )
    format = models.CharField(
        _("format"), max_length=16, choices=Format.choices, default=Format.STANDARD
    )
    is_active = models.BooleanField(_("is active"), default=True)
    disabled_reason = models.CharField(_("disabled reason"), max_length=255, blank=True, default="")
    disabled_at = models.DateTimeField(_("disabled at"), null=True, blank=True)
    # The first failed attempt since the last success: five days of failures disable it.
    failing_since = models.DateTimeField(_("failing since"), null=True, blank=True)
    # The circuit breaker (docs/events.md, "An endpoint that keeps failing"): attempts
    # failed since the last success; while `open_until` is in the future none of its
    # deliveries is attempted, once it has passed one attempt at a time probes it, and
    # `times_opened` (since the last success) lengthens each back-off.
    failures_in_a_row = models.PositiveIntegerField(_("failures in a row"), default=0)
    open_until = models.DateTimeField(_("backed off until"), null=True, blank=True)
    times_opened = models.PositiveSmallIntegerField(_("times backed off"), default=0)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("event webhook endpoint")
        verbose_name_plural = _("event webhook endpoints")
        indexes = [
            # Every emission looks for these: the organization's active endpoints.
            models.Index(
                fields=["organization"],
                condition=Q(deleted_at__isnull=True, is_active=True),
                name="active_event_endpoints",
            ),
            models.Index(
                fields=["organization", "id"],
                condition=Q(deleted_at__isnull=True),
                name="live_event_endpoints",
            ),
        ]

    def __str__(self) -> str:
        return self.url

    def subscribes_to(self, event: str) -> bool:
        return not self.events or event in self.events

    def circuit(self, now) -> str:
        """`closed` (delivered as usual), `open` (backed off until `open_until`) or
        `half-open` (the back-off is over: one attempt at a time probes it)."""
        if self.open_until is None:
            return Circuit.CLOSED
        return Circuit.OPEN if self.open_until > now else Circuit.HALF_OPEN


class Circuit(models.TextChoices):
    CLOSED = "closed", pgettext_lazy("circuit breaker", "closed")
    OPEN = "open", pgettext_lazy("circuit breaker", "open")
    HALF_OPEN = "half-open", pgettext_lazy("circuit breaker", "half-open")


class Emission(models.Model):
    """An event emitted and not yet fanned out into its deliveries: the outbox.

    Written by the web's hot paths (every inbound message), so it is as light as a row
    can be: no foreign keys (their checks at the commit share-lock the endpoints' rows,
    which every concurrent webhook of the organization wants) and no index but the
    primary key, which the workers read it by, oldest first. A row per delivery written
    by the web cost its throughput several times what this row does."""

    # The ids of the endpoints that wanted the event when it was emitted, comma-separated
    # (at most MAX_ENDPOINTS); one that is gone by the fan-out gets no delivery.
    endpoints = models.CharField(max_length=255)
    event = models.CharField(max_length=32, choices=Event.choices)
    # The JSON body every delivery of the event sends.
    body = models.TextField()
    # When the change happened: its deliveries' created_at.
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.event} #{self.pk}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", pgettext_lazy("delivery status", "pending")
    SUCCEEDED = "succeeded", pgettext_lazy("delivery status", "succeeded")
    FAILED = "failed", pgettext_lazy("delivery status", "failed")


class Delivery(models.Model):
    # The endpoint's organization, kept here so that the admin's tenancy needs no join.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, verbose_name=_("organization")
    )
    # No index of its own: endpoint_deliveries below begins with it.
    endpoint = models.ForeignKey(
        Endpoint,
        on_delete=models.CASCADE,
        related_name="deliveries",
        db_index=False,
        verbose_name=_("endpoint"),
    )
    # Unique by the constraint below: as `unique=True` it also had an index for LIKE on
    # PostgreSQL, which nothing uses and every insert and update paid for.
    msg_id = models.CharField(_("webhook-id"), max_length=64, default=new_message_id)
    event = models.CharField(_("event"), max_length=32, choices=Event.choices)
    # The JSON body as sent: every attempt signs and posts these same characters.
    body = models.TextField(_("body"))
    status = models.CharField(
        _("status"), max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    # Set while an attempt is under way (the lease, and the token of the claim that took
    # it): no other worker takes the delivery before then; after it (the worker died)
    # another posts the same attempt again.
    claimed_until = models.DateTimeField(_("claimed until"), null=True, blank=True)
    next_attempt_at = models.DateTimeField(_("next attempt at"), null=True, blank=True)
    response_status = models.PositiveSmallIntegerField(_("response status"), null=True, blank=True)
    last_error = models.TextField(_("last error"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("delivery")
        verbose_name_plural = _("deliveries")
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["endpoint", "-id"], name="endpoint_deliveries"),
            # The queue the workers drain (events/queries.py): each endpoint's head of
            # first attempts (next_attempt_at null, by id) and of retries (by their time),
            # so that a claim reads a few rows per endpoint whatever the backlog.
            models.Index(
                fields=["endpoint", "next_attempt_at", "id"],
                condition=Q(status="pending", claimed_until__isnull=True),
                name="due_deliveries",
            ),
            # The attempts under way (their leases), a few per endpoint at most: the caps
            # count them, and one whose lease ran out is due again.
            models.Index(
                fields=["endpoint", "claimed_until"],
                condition=Q(status="pending", claimed_until__isnull=False),
                name="leased_deliveries",
            ),
        ]
        constraints = [models.UniqueConstraint(fields=["msg_id"], name="unique_delivery_msg_id")]

    def __str__(self) -> str:
        return f"{self.event} {self.msg_id}"
