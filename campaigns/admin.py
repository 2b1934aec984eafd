"""Campaigns in the staff admin: created from a synced template (the add page), their
progress and counts, and a cancel action, all through campaigns.services like the API's.

The add page asks for each of the chosen template's variables by name, one input each
(business_numbers/template_variables.py): choosing a template reloads the page with
its inputs (campaigns/static/campaigns/campaign_form.js); without scripts, saving with
a new template shows its inputs, required, for a second save."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.text import format_lazy
from django.utils.translation import gettext, ngettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from accounts.admin_scoping import OrganizationScopedAdmin, is_scoped, scoped_queryset
from business_numbers.models import MessageTemplate
from business_numbers.template_variables import TemplateVariable, template_variables
from business_numbers.template_variables import components as template_components
from campaigns import services
from campaigns.models import Campaign, CampaignStatus
from campaigns.selectors import campaigns_with_counts
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.core.service_admin import adopt

PHONES_MAX = 10_000
RATE_MIN, RATE_MAX = 1, 1000


def template_choice(templates: QuerySet[MessageTemplate]) -> forms.ModelChoiceField:
    """The template input, offering `templates`; with none yet, it says where they come
    from (the sandbox's hello_world too comes with a sync)."""
    help_text: str
    if templates.exists():
        help_text = gettext("From the templates synced from WhatsApp.")
    else:
        help_text = format_html(
            gettext(
                'None yet: sync them from WhatsApp, or write one, on <a href="{}">the '
                "message templates page</a>."
            ),
            reverse("admin:business_numbers_messagetemplate_changelist"),
        )
    return forms.ModelChoiceField(queryset=templates, label=_("Template"), help_text=help_text)


class CampaignCreateForm(forms.ModelForm):
    """The API's campaign body: a synced template (with its parameters, as
    /api/send/template takes them), a group or pasted numbers, a rate and a start."""

    # Each request's own (form_for_template): this one offers nothing.
    message_template = forms.ModelChoiceField(
        queryset=MessageTemplate.objects.none(), label=_("Template")
    )
    numbers = forms.CharField(
        label=_("Phone numbers"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=_("Instead of a group: one number a line (or separated by commas)."),
    )

    # The chosen template's variables, each one of the form's fields (variable_<key>).
    variables: list[TemplateVariable] = []

    class Meta:
        model = Campaign
        fields = ["organization", "name", "contact_group", "rate", "scheduled_at"]

    class Media:
        js = ["campaigns/campaign_form.js"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["rate"].required = False

    def clean_rate(self):
        rate = self.cleaned_data["rate"]
        if rate is not None and not RATE_MIN <= rate <= RATE_MAX:
            raise ValidationError(
                gettext("The rate is %(low)d to %(high)d messages per second.")
                % {"low": RATE_MIN, "high": RATE_MAX}
            )
        return rate

    def clean_numbers(self):
        phones = [
            part.strip()
            for part in self.cleaned_data["numbers"].replace(",", "\n").splitlines()
            if part.strip()
        ]
        if len(phones) > PHONES_MAX:
            raise ValidationError(
                gettext("A campaign has at most %(count)d phone numbers.") % {"count": PHONES_MAX}
            )
        for phone in phones:
            try:
                normalize_phone(phone)
            except InvalidPhoneNumber as error:
                raise ValidationError(f"{phone}: {gettext(str(error))}") from None
        return phones

    def clean_scheduled_at(self):
        value = self.cleaned_data["scheduled_at"]
        if value is not None and value <= timezone.now():
            raise ValidationError(gettext("The scheduled time must be in the future."))
        return value

    def clean(self):
        data = super().clean()
        group, phones = data.get("contact_group"), data.get("numbers")
        if group and phones:
            self.add_error("numbers", gettext("Choose a contact group or numbers, not both."))
        elif not group and not phones and "numbers" not in self.errors:
            self.add_error("numbers", gettext("Choose a contact group or paste numbers."))
        if group is not None and not group.contacts.filter(deleted_at__isnull=True).exists():
            self.add_error("contact_group", gettext("The contact group has no contacts."))
        organization = data.get("organization") or getattr(self.instance, "organization", None)
        for name in ("contact_group", "message_template"):
            record = data.get(name)
            if record and organization and record.organization_id != organization.pk:
                self.add_error(name, gettext("This belongs to another organization."))
        return data

    def template_body(self) -> dict:
        template = self.cleaned_data["message_template"]
        body = {"name": template.name, "language": {"code": template.language}}
        if self.variables:
            values = {v.key: self.cleaned_data[variable_field(v)] for v in self.variables}
            body["components"] = template_components(self.variables, values)
        return body


# How each part of a template names its variable, for the label: "Body {{first_name}}".
PART_LABELS = {
    "header": _("Header"),
    "body": _("Body"),
    "button": _("Button link"),
}
MEDIA_LABELS = {
    "image": _("Header image (its link)"),
    "video": _("Header video (its link)"),
    "document": _("Header document (its link)"),
}


def variable_field(variable: TemplateVariable) -> str:
    return f"variable_{variable.key}"


def form_for_template(
    template: MessageTemplate | None, templates: QuerySet[MessageTemplate]
) -> type[CampaignCreateForm]:
    """The create form offering `templates`, with one required input for each of
    `template`'s variables. Each request gets a form class with fields of its own: a
    field changed on a shared class would be another organization's request's too."""
    variables = template_variables(template) if template is not None else []
    fields: dict[str, object] = {
        "variables": variables,
        "message_template": template_choice(templates),
    }
    for variable in variables:
        if variable.media:
            fields[variable_field(variable)] = forms.URLField(
                label=MEDIA_LABELS[variable.media], assume_scheme="https"
            )
            continue
        label = format_lazy("{} {{{{{}}}}}", PART_LABELS[variable.part], variable.name)
        # The admin shows help text as HTML: a template's text is escaped first.
        fields[variable_field(variable)] = forms.CharField(
            label=label, max_length=1024, help_text=escape(variable.text)
        )
    return type("CampaignCreateForm", (CampaignCreateForm,), fields)


def chosen_template(request) -> MessageTemplate | None:
    """The template the add page is for: the one posted, or `?message_template=` (the
    form's script reloads the page with it); only one the staff member may use."""
    if not hasattr(request, "_campaign_template"):
        chosen = request.POST.get("message_template") or request.GET.get("message_template")
        template = None
        if chosen and chosen.isdigit():
            templates = scoped_queryset(MessageTemplate.objects.live(), request)
            template = templates.filter(pk=int(chosen)).first()
        request._campaign_template = template
    return request._campaign_template


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
    readonly_fields = fields  # type: ignore[assignment]  # names only, no groups

    def get_queryset(self, request):
        return campaigns_with_counts(super().get_queryset(request))

    def has_delete_permission(self, request, obj=None):
        return False

    # The add page: the create form, saved by campaigns.services.create_campaign.

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None:
            return super().get_form(request, obj, change, **kwargs)
        templates = scoped_queryset(MessageTemplate.objects.all(), request)
        template_form = form_for_template(
            chosen_template(request), templates.order_by("name", "language")
        )
        return super().get_form(request, obj, change, form=template_form, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            chosen = template_variables(template) if (template := chosen_template(request)) else []
            # The template first: choosing it reloads the page with its variables.
            fields = ["message_template", *map(variable_field, chosen), "name"]
            fields += ["contact_group", "numbers", "rate", "scheduled_at"]
            return fields if is_scoped(request) else ["organization", *fields]
        return self.fields

    def get_readonly_fields(self, request, obj=None):
        return super().get_readonly_fields(request, obj) if obj is not None else []

    def save_through_service(self, request, obj, form, change):
        if change:
            return obj  # nothing on the progress page is editable; cancelling is the action
        data = form.cleaned_data
        campaign = services.create_campaign(
            organization=self.organization_for_new_record(request, form),
            name=data["name"],
            template=form.template_body(),
            contact_group=data.get("contact_group"),
            phones=data.get("numbers") or None,
            scheduled_at=data.get("scheduled_at"),
            rate=data.get("rate"),
            created_by=request.user.pk,
        )
        adopt(obj, campaign)

    def response_add(self, request, obj, post_url_continue=None):
        # Straight to the new campaign's progress page.
        self.message_user(request, gettext("The campaign was created."), messages.SUCCESS)
        return HttpResponseRedirect(
            reverse(
                "admin:campaigns_campaign_change", args=[obj.pk], current_app=self.admin_site.name
            )
        )

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "show_save_and_add_another": False}
        extra_context.update(show_save_and_continue=False)
        if object_id is not None:
            extra_context["show_save"] = False
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
