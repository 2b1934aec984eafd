"""Campaigns in the staff admin: their progress and counts, and a cancel action that goes
through campaigns.services like the API's. Campaigns are created through the API."""

from django.contrib import admin, messages
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, pgettext_lazy

from accounts.admin_scoping import OrganizationScopedAdmin
from campaigns import services
from campaigns.models import Campaign, CampaignStatus
from campaigns.selectors import campaigns_with_counts

COUNTS = [
    "total",
    "pending",
    "sent",
    "delivered",
    "read",
    "failed",
    "skipped",
    "unknown",
    "waiting",
]
# The column headers of the counts: how many recipients are in each state.
COUNT_LABELS = {
    "total": pgettext_lazy("campaign count", "total"),
    "pending": pgettext_lazy("campaign count", "pending"),
    "sent": pgettext_lazy("campaign count", "sent"),
    "delivered": pgettext_lazy("campaign count", "delivered"),
    "read": pgettext_lazy("campaign count", "read"),
    "failed": pgettext_lazy("campaign count", "failed"),
    "skipped": pgettext_lazy("campaign count", "skipped"),
    "unknown": pgettext_lazy("campaign count", "unknown"),
    "waiting": pgettext_lazy("campaign count", "waiting"),
}


@admin.register(Campaign)
class CampaignAdmin(OrganizationScopedAdmin):
    list_display = [
        "name",
        "status",
        "paused_reason",
        "progress",
        *COUNTS,
        "created_at",
        "finished_at",
    ]
    list_filter = ["status"]
    search_fields = ["name"]
    ordering = ["-id"]
    actions = ["cancel", "resume", "retry_unknown"]
    fields = [
        "organization",
        "name",
        "status",
        "paused_reason",
        "progress",
        "counts",
        "rate",
        "contact_group",
        "template",
        "scheduled_at",
        "created_at",
        "started_at",
        "finished_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return campaigns_with_counts(super().get_queryset(request))

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_through_service(self, request, obj, form, change):
        return obj  # nothing on the page is editable; cancelling is the action

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "show_save": False}
        extra_context.update(show_save_and_continue=False, show_save_and_add_another=False)
        return super().changeform_view(request, object_id, form_url, extra_context)

    @admin.display(description=_("progress"))
    def progress(self, campaign):
        done = campaign.total - campaign.pending
        percent = round(100 * done / campaign.total) if campaign.total else 0
        return format_html(
            '<progress value="{}" max="{}" title="{}%"></progress> {}%',
            done,
            campaign.total or 1,
            percent,
            percent,
        )

    @admin.display(description=_("counts"))
    def counts(self, campaign):
        return ", ".join(f"{COUNT_LABELS[name]} {getattr(campaign, name)}" for name in COUNTS)

    @admin.action(description=_("Cancel the selected campaigns"), permissions=["change"])
    def cancel(self, request, queryset):
        cancelled = 0
        for campaign in queryset:
            if campaign.status in (
                CampaignStatus.SCHEDULED,
                CampaignStatus.RUNNING,
                CampaignStatus.PAUSED,
            ):
                services.cancel_campaign(campaign=campaign)
                cancelled += 1
        message = ngettext(
            "%(count)d campaign cancelled.", "%(count)d campaigns cancelled.", cancelled
        )
        self.message_user(request, message % {"count": cancelled}, messages.SUCCESS)

    @admin.action(description=_("Resume the selected paused campaigns"), permissions=["change"])
    def resume(self, request, queryset):
        resumed = 0
        for campaign in queryset.filter(status=CampaignStatus.PAUSED):
            try:
                services.resume_campaign(campaign=campaign)
            except services.CampaignConflict:
                message = _("%(campaign)s stays paused: %(reason)s")
                reason = campaign.get_paused_reason_display()
                self.message_user(
                    request, message % {"campaign": campaign, "reason": reason}, messages.WARNING
                )
                continue
            resumed += 1
        message = ngettext("%(count)d campaign resumed.", "%(count)d campaigns resumed.", resumed)
        self.message_user(request, message % {"count": resumed}, messages.SUCCESS)

    @admin.action(
        description=_("Send the unknown recipients again (a message may arrive twice)"),
        permissions=["change"],
    )
    def retry_unknown(self, request, queryset):
        retried = 0
        for campaign in queryset.exclude(
            status__in=[CampaignStatus.SCHEDULED, CampaignStatus.CANCELLED]
        ):
            retried += services.retry_unknown(campaign=campaign)
        message = ngettext(
            "%(count)d recipient sent again.", "%(count)d recipients sent again.", retried
        )
        self.message_user(request, message % {"count": retried}, messages.SUCCESS)


def count_column(name: str):
    def column(self, campaign) -> int:
        return getattr(campaign, name)

    return admin.display(description=COUNT_LABELS[name], ordering=name)(column)


for _name in COUNTS:  # the annotated counts as list columns
    setattr(CampaignAdmin, _name, count_column(_name))
