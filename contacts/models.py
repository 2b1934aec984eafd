"""Contacts and contact groups of an organization."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from accounts.models import OrganizationRecord

LIVE = Q(deleted_at__isnull=True)


class ContactGroup(OrganizationRecord):
    name = models.CharField(_("name"), max_length=255)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("contact group")
        verbose_name_plural = _("contact groups")
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "name"], condition=LIVE, name="unique_live_group_name"
            )
        ]
        indexes = [models.Index(fields=["organization", "id"], condition=LIVE, name="live_groups")]

    def __str__(self) -> str:
        return self.name


class Contact(OrganizationRecord):
    first_name = models.CharField(_("first name"), max_length=255, null=True, blank=True)
    last_name = models.CharField(_("last name"), max_length=255, null=True, blank=True)
    phone = models.CharField(
        _("phone"),
        max_length=20,
        blank=True,
        help_text=_("Digits only, country code first; empty when WhatsApp withholds it."),
    )
    # WhatsApp's business-scoped user id (BSUID, `CC.` + up to 128 characters): the one
    # identity of a user who adopted a username and whose number WhatsApp withholds.
    user_id = models.CharField(_("WhatsApp user id"), max_length=160, blank=True, default="")
    email = models.EmailField(_("email"), max_length=255, null=True, blank=True)
    avatar = models.CharField(_("avatar"), max_length=255, null=True, blank=True)
    address = models.JSONField(_("address"), null=True, blank=True)
    contact_group = models.ForeignKey(
        ContactGroup,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="contacts",
        verbose_name=_("contact group"),
    )
    is_favorite = models.BooleanField(_("favourite"), default=False)
    # Set by an inbound STOP (or the organization's own words) and by the channel's error
    # 131050; an inbound START clears it. Campaigns skip opted-out contacts.
    opted_out = models.BooleanField(_("opted out"), default=False)
    # What an import's extra columns held (a spreadsheet's "City", "Plan"...), by column.
    metadata = models.JSONField(_("metadata"), null=True, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("contact")
        verbose_name_plural = _("contacts")
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "phone"],
                condition=LIVE & ~Q(phone=""),
                name="unique_live_contact_phone",
            ),
            models.UniqueConstraint(
                fields=["organization", "user_id"],
                condition=LIVE & ~Q(user_id=""),
                name="unique_live_contact_user_id",
            ),
        ]
        indexes = [
            models.Index(fields=["organization", "id"], condition=LIVE, name="live_contacts")
        ]

    def __str__(self) -> str:
        return self.full_name.strip() or (f"+{self.phone}" if self.phone else self.user_id)

    @property
    def full_name(self) -> str:
        return f"{self.first_name or ''} {self.last_name or ''}"


class ContactBlock(models.Model):
    """How many live contacts an organization has, in all and per block of ids.

    Block b holds the live contacts with ids from b * SIZE to (b + 1) * SIZE - 1; the
    row of block TOTAL (-1) holds all of them. contacts.services keeps both rows a
    contact falls in, in the same transaction as every create and delete and in one
    statement. The total gives an unfiltered list its exact `meta.total` without
    counting up to a million rows, and the running sum of the blocks takes a deep page
    to the block holding its first contact.
    """

    SIZE = 1000
    TOTAL = -1

    # The unique (organization, block) index serves every look-up by organization.
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    block = models.BigIntegerField()
    live = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "block"], name="unique_contact_block")
        ]

    def __str__(self) -> str:
        return f"{self.live} live contacts in block {self.block}"


class ImportStatus(models.TextChoices):
    PENDING = "pending", pgettext_lazy("import status", "pending")
    RUNNING = "running", pgettext_lazy("import status", "running")
    COMPLETED = "completed", pgettext_lazy("import status", "completed")
    FAILED = "failed", pgettext_lazy("import status", "failed")


class OnDuplicate(models.TextChoices):
    SKIP = "skip", pgettext_lazy("on duplicate", "skip")
    UPDATE = "update", pgettext_lazy("on duplicate", "update")


class ContactImport(OrganizationRecord):
    """One bulk import of contacts (a CSV file, a workbook or a JSON list), done by a task
    in batches.

    The file is checked as it comes (contacts/imports.py; a workbook's sheet only by the
    task) and streamed to storage (a JSON list's rows as JSON lines), kept there until the
    import is done; `processed` counts the rows already imported, written in the same
    transaction as each batch, so a task run again carries on from there.
    """

    status = models.CharField(
        _("status"), max_length=16, choices=ImportStatus.choices, default=ImportStatus.PENDING
    )
    file_name = models.CharField(_("file name"), max_length=255, blank=True, default="")
    on_duplicate = models.CharField(
        _("on duplicate"), max_length=8, choices=OnDuplicate.choices, default=OnDuplicate.SKIP
    )
    contact_group = models.ForeignKey(
        ContactGroup,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("contact group"),
    )
    # The file's name in the default storage (a CSV file as sent, `.csv`, a workbook as
    # sent, `.xlsx`, or a JSON list's rows, `.jsonl`) and how a CSV file's text is read;
    # the file is deleted once the import is done.
    stored_file = models.CharField(_("stored file"), max_length=255, blank=True, default="")
    encoding = models.CharField(_("encoding"), max_length=16, blank=True, default="")
    # Where imports started by an earlier version kept their rows or text (read by the
    # task when there is no stored file); emptied once the import is done.
    rows = models.JSONField(_("rows"), default=list, blank=True)
    source = models.TextField(_("file"), blank=True, default="")
    total = models.PositiveIntegerField(pgettext_lazy("import count", "total"), default=0)
    processed = models.PositiveIntegerField(pgettext_lazy("import count", "processed"), default=0)
    created = models.PositiveIntegerField(pgettext_lazy("import count", "created"), default=0)
    updated = models.PositiveIntegerField(pgettext_lazy("import count", "updated"), default=0)
    skipped = models.PositiveIntegerField(pgettext_lazy("import count", "skipped"), default=0)
    failed = models.PositiveIntegerField(pgettext_lazy("import count", "failed"), default=0)
    # The first ERRORS_KEPT failing rows: {"row", "phone", "message"}.
    errors = models.JSONField(_("errors"), default=list, blank=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    ERRORS_KEPT = 1000

    class Meta(OrganizationRecord.Meta):
        verbose_name = _("contact import")
        verbose_name_plural = _("contact imports")

    def __str__(self) -> str:
        return self.file_name or str(self.uuid)


class OptOutWords(models.Model):
    """The words that opt an organization's contacts out of (and back into) its campaigns,
    besides STOP and START. Matched against a whole inbound text, case-folded."""

    organization = models.OneToOneField(
        "accounts.Organization",
        on_delete=models.CASCADE,
        related_name="opt_out_words",
        verbose_name=_("organization"),
    )
    stop_words = models.TextField(
        _("stop words"),
        blank=True,
        default="",
        help_text=_("One word or phrase a line, besides STOP."),
    )
    start_words = models.TextField(
        _("start words"),
        blank=True,
        default="",
        help_text=_("One word or phrase a line, besides START."),
    )

    class Meta:
        verbose_name = _("opt-out words")
        verbose_name_plural = _("opt-out words")

    def __str__(self) -> str:
        return gettext("Opt-out words of %(organization)s") % {"organization": self.organization}
