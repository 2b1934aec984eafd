"""The figures kept as messages change (docs/analytics.md): a daily rollup of each
organization's messages per number, billable messages by WhatsApp's pricing category,
and staff's first responses. The recorded-message listeners (analytics/services.py)
append the changes as increments in the transaction of what they count; a fold
(analytics/folding.py) adds them to the rollup exactly once. Never counted from the
chats on a request."""

from django.conf import settings
from django.db import models

from business_numbers.models import Number
from sending.models import Chat, Conversation


class DailyMessages(models.Model):
    """One UTC day of one number's messages: outbound ones (on the day they were created)
    at the furthest status each reached now, and inbound ones."""

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="+"
    )
    number = models.ForeignKey(Number, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    outbound = models.BigIntegerField(default=0)
    sent = models.BigIntegerField(default=0)
    delivered = models.BigIntegerField(default=0)
    read = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    inbound = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "day", "number"], name="daily_messages_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.number_id}: {self.outbound} out, {self.inbound} in"


class DailyBillable(models.Model):
    """One UTC day of one number's billable messages of one pricing category."""

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="+"
    )
    number = models.ForeignKey(Number, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    category = models.CharField(max_length=64)
    messages = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "day", "number", "category"],
                name="daily_billable_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.category}: {self.messages}"


class Increment(models.Model):
    """A change of one day's figures of one number, recorded with what it counts and not
    folded into DailyMessages, DailyBillable and Awaiting yet: the counters' changes, a
    message WhatsApp priced as billable (`chat_id`, `category`; claimed once when
    folded), or a conversation a customer opened or reopened, waiting for staff from
    `waiting_since`.

    Appended, never updated: the webhooks of one number write no row they share, where
    adding to the day's row made each wait for the others' commits and rewrite it. No
    foreign key constraint or index beyond the key: each would cost every webhook a
    look-up; the fold drops the increments of numbers and chats deleted since."""

    id = models.BigAutoField(primary_key=True)
    organization_id = models.BigIntegerField()
    number_id = models.BigIntegerField()
    day = models.DateField()
    outbound = models.IntegerField(db_default=0)
    sent = models.IntegerField(db_default=0)
    delivered = models.IntegerField(db_default=0)
    read = models.IntegerField(db_default=0)
    failed = models.IntegerField(db_default=0)
    inbound = models.IntegerField(db_default=0)
    chat_id = models.BigIntegerField(null=True)
    category = models.CharField(max_length=64, db_default="")
    conversation_id = models.BigIntegerField(null=True)
    waiting_since = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"{self.day} {self.number_id}: increment {self.pk}"


class BilledMessage(models.Model):
    """An outbound message WhatsApp priced as billable, once: WhatsApp repeats the pricing
    on each of its statuses, and only the first one counts."""

    chat = models.OneToOneField(Chat, on_delete=models.CASCADE, primary_key=True, related_name="+")
    category = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"{self.chat_id} {self.category}"


class Awaiting(models.Model):
    """A conversation a customer's message opened or reopened, waiting for staff's first
    answer since `since` (that message's time)."""

    conversation = models.OneToOneField(
        Conversation, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    since = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.conversation_id} since {self.since}"


class FirstResponse(models.Model):
    """A staff member's first answer in a conversation opened or reopened by a customer."""

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="+"
    )
    staff = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    answered_at = models.DateTimeField()
    seconds = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["organization", "answered_at"], name="first_responses_by_time")
        ]

    def __str__(self) -> str:
        return f"{self.staff_id}: {self.seconds} s"


class DailyStaffMessages(models.Model):
    """One UTC day of the messages one staff member sent from the inbox."""

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="+"
    )
    staff = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    messages = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "day", "staff"], name="daily_staff_messages_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.staff_id}: {self.messages}"
