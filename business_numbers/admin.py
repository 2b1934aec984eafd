"""The organization's numbers and their templates in the admin.

The staff see their organization's numbers with their health and its templates, both
read-only (the numbers are written through the API and the commands; health and
templates come from WhatsApp); templates have a "Sync from WhatsApp" button, and
managers write new ones with a preview (business_numbers/template_admin.py). Superusers
edit the default number (the channel) as an inline of the organization, saved through
business_numbers.services.configure_channel; its secrets are write-only. This app
re-registers accounts' organization admin with the inline, a channel column and filter,
and the "Sync message templates" action.

(Over 400 lines would be split; the inline and the pages are one section each.)
"""

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin import OrganizationAdmin
from accounts.admin_scoping import (
    AgentAccess,
    OrganizationScopedAdmin,
    is_scoped,
    staff_organization,
)
from accounts.models import Organization
from business_numbers import services
from business_numbers.gateway import ChannelNotConfigured, GatewayError
from business_numbers.models import (
    NUMBERS_CACHE,
    MessageTemplate,
    Number,
    NumberKind,
    default_of,
    numbers_of,
)
from business_numbers.services import SyncResult
from business_numbers.template_admin import write_template_view
from messaging_project.core.service_admin import ServiceErrorsForm

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


def pretty_json(value) -> str:
    if value in (None, "", [], {}):
        return "-"
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class ReadOnlyAdmin(OrganizationScopedAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def restriction_list(restrictions) -> str:
    """A number's restrictions, one a line: the kind, and until when."""
    rows = [
        (restriction.get("restriction_type", ""), until(restriction.get("expiration")))
        for restriction in (restrictions if isinstance(restrictions, list) else [])
        if isinstance(restriction, dict)
    ]
    if not rows:
        return gettext("None")
    return format_html("<ul>{}</ul>", format_html_join("", "<li>{} {}</li>", rows))


def until(expiration) -> str:
    if not isinstance(expiration, int):
        return ""
    moment = date_format(datetime.fromtimestamp(expiration, UTC), "DATETIME_FORMAT")
    return gettext("until %(time)s") % {"time": moment}


def alert_list(alerts) -> str:
    """A number's alerts from WhatsApp, newest first: severity, kind, status, what it says."""
    rows = [
        (
            alert.get("alert_severity", ""),
            alert.get("alert_type", ""),
            alert.get("alert_status", ""),
            alert.get("alert_description", ""),
        )
        for alert in (alerts if isinstance(alerts, list) else [])
        if isinstance(alert, dict)
    ]
    if not rows:
        return gettext("None")
    return format_html(
        "<ul>{}</ul>", format_html_join("", "<li><strong>{}</strong> {} ({}): {}</li>", rows)
    )


@admin.register(Number)
class NumberAdmin(ReadOnlyAdmin):
    """The organization's numbers and their health, as WhatsApp last reported it: every
    staff member sees them, read-only (WhatsApp's to say, through the webhook)."""

    list_display = [
        "__str__",
        "kind",
        "is_default",
        "display_phone_number",
        "quality_rating",
        "messaging_limit",
        "account_status",
        "health_updated_at",
    ]
    list_filter = ["kind", "quality_rating"]
    search_fields = ["label", "display_phone_number", "phone_number_id"]
    ordering = ["-is_default", "id"]
    identity = [
        "organization",
        "label",
        "kind",
        "is_default",
        "phone_number_id",
        "business_account_id",
        "display_phone_number",
        "verified_name",
        "created_at",
    ]
    health = [
        "quality_rating",
        "messaging_limit",
        "account_status",
        "number_restrictions",
        "number_alerts",
        "health_updated_at",
    ]
    readonly_fields = [*identity, *health]
    fieldsets = [
        (None, {"fields": identity}),  # type: ignore[typeddict-item]  # names only
        (
            _("The number's health"),
            {
                "fields": health,  # type: ignore[typeddict-item]  # names only, no groups
                "description": _("As WhatsApp last reported it through the webhook."),
            },
        ),
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(deleted_at__isnull=True)

    @admin.display(description=_("restrictions"))
    def number_restrictions(self, number):
        return restriction_list(number.restrictions)

    @admin.display(description=_("alerts"))
    def number_alerts(self, number):
        return alert_list(number.alerts)


def sync_organization(organization) -> tuple[str, int]:
    """Sync the templates of each of the organization's numbers; a message for the user
    and its level."""
    try:
        numbers = numbers_of(organization) or [Number.objects.default_for(organization)]
        # Every Cloud API number's; an organization on the sandbox has the sandbox's.
        cloud = [number for number in numbers if number.kind == NumberKind.CLOUD_API]
        results = [services.sync_templates(number=number) for number in cloud or numbers[:1]]
    except (GatewayError, ChannelNotConfigured) as error:
        text = gettext("%(organization)s: WhatsApp did not give the templates: %(error)s")
        return text % {"organization": organization, "error": error}, messages.ERROR
    result = SyncResult(
        created=sum(r.created for r in results),
        updated=sum(r.updated for r in results),
        removed=sum(r.removed for r in results),
    )
    text = gettext(
        "%(organization)s: templates added: %(created)d, updated: %(updated)d, "
        "removed: %(removed)d."
    )
    return (
        text
        % {
            "organization": organization,
            "created": result.created,
            "updated": result.updated,
            "removed": result.removed,
        },
        messages.SUCCESS,
    )


@admin.register(MessageTemplate)
class MessageTemplateAdmin(ReadOnlyAdmin):
    agent_access = AgentAccess.VIEW  # agents send them, not sync them
    list_display = ["name", "language", "category", "status", "quality", "updated_at"]
    list_filter = ["status", "category", "language"]
    search_fields = ["name"]
    ordering = ["name", "language"]
    fields = [
        "organization",
        "number",
        "name",
        "language",
        "category",
        "status",
        "reason",
        "quality",
        "external_id",
        "updated_at",
        "template_components",
    ]
    readonly_fields = fields  # type: ignore[assignment]  # names only, no groups

    @admin.display(description=_("components"))
    def template_components(self, template):
        return pretty_json(template.components)

    def get_urls(self):
        view = self.admin_site.admin_view(self.sync_view)
        write = self.admin_site.admin_view(self.write_view)
        return [
            path("sync/", view, name="business_numbers_messagetemplate_sync"),
            path("write/", write, name="business_numbers_messagetemplate_write"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        # The button syncs the staff member's organization; superusers use the
        # action on organizations instead.
        extra_context = {
            **(extra_context or {}),
            "can_sync": is_scoped(request) and self.has_manager_permission(request),
            "can_write": self.has_manager_permission(request),
        }
        return super().changelist_view(request, extra_context)

    def write_view(self, request):
        """A template written here, submitted to WhatsApp (business_numbers/template_admin.py)."""
        return write_template_view(self, request)

    def sync_view(self, request):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        organization = staff_organization(request)
        may_sync = self.has_view_permission(request) and self.has_manager_permission(request)
        if organization is None or not may_sync:
            raise PermissionDenied
        text, level = sync_organization(organization)
        self.message_user(request, text, level)
        return HttpResponseRedirect(reverse("admin:business_numbers_messagetemplate_changelist"))


def secret_field(label: "StrOrPromise") -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        strip=True,
        # Never rendered back into the page, even after a failed save.
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
    )


class ChannelForm(forms.ModelForm):
    """Secrets are write-only: the field is always empty, and leaving it empty keeps the
    stored value (`stored`)."""

    access_token = secret_field(_("Access token"))
    app_secret = secret_field(_("App secret"))
    verify_token = secret_field(_("Verify token"))

    class Meta:
        model = Number
        fields = [
            "kind",
            "phone_number_id",
            "business_account_id",
            *Number.SECRET_FIELDS,
            "enforce_service_window",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stored = {name: getattr(self.instance, name) for name in Number.SECRET_FIELDS}
        for name in Number.SECRET_FIELDS:
            self.fields[name].help_text = (
                _("A value is stored; leave empty to keep it.")
                if self.stored[name]
                else _("Not set. Stored, never shown again.")
            )
            # The stored secret must not travel back to the page as the initial value.
            self.initial.pop(name, None)


def save_channel_form(organization: Organization, form: ChannelForm) -> Number:
    """The form's changes, through the service (which refuses with a ValidationError)."""
    data = form.cleaned_data
    if set(form.changed_data) == {"enforce_service_window"}:  # the credentials as they are
        return services.set_service_window(
            organization=organization, enforce=data["enforce_service_window"]
        )
    channel = save_channel_credentials(organization, form)
    if "enforce_service_window" in form.changed_data:
        channel = services.set_service_window(
            organization=organization, enforce=data["enforce_service_window"]
        )
    return channel


def save_channel_credentials(organization: Organization, form: ChannelForm) -> Number:
    data = form.cleaned_data
    if data["kind"] == NumberKind.CLOUD_API:
        return services.configure_channel(
            organization=organization,
            phone_number_id=data.get("phone_number_id"),
            access_token=data.get("access_token") or form.stored["access_token"],
            # Empty optional settings are left as they are.
            business_account_id=data.get("business_account_id") or None,
            app_secret=data.get("app_secret") or None,
            verify_token=data.get("verify_token") or None,
        )
    # The sandbox clears the credentials; any typed along with it are refused, not dropped.
    typed = {
        name: data[name]
        for name in form.changed_data
        if name not in ("kind", "enforce_service_window") and data.get(name)
    }
    return services.configure_channel(organization=organization, sandbox=True, **typed)


class ChannelInline(admin.StackedInline):
    """The organization's default number (its channel), as `configure_channel` sets it."""

    model = Number
    form = ChannelForm
    can_delete = False
    max_num = 1
    verbose_name = verbose_name_plural = _("WhatsApp channel")

    def get_queryset(self, request):
        return super().get_queryset(request).live().filter(is_default=True)

    # The number's health is WhatsApp's to say (the webhook), not the admin's.
    HEALTH_FIELDS = [
        "display_phone_number",
        "verified_name",
        "quality_rating",
        "messaging_limit",
        "account_status",
        "channel_restrictions",
        "channel_alerts",
        "health_updated_at",
    ]
    readonly_fields = HEALTH_FIELDS
    fieldsets = [
        (
            None,
            {
                # A list of names is a valid group; the stubs want list[str | list[str]].
                "fields": ChannelForm.Meta.fields,  # type: ignore[typeddict-item]
                "description": _(
                    "The sandbox keeps messages on this server. The Cloud API "
                    "needs the phone number id and an access token from Meta."
                ),
            },
        ),
        (
            _("The number's health"),
            {
                "fields": HEALTH_FIELDS,  # type: ignore[typeddict-item]
                "description": _("As WhatsApp last reported it through the webhook."),
            },
        ),
    ]

    @admin.display(description=_("restrictions"))
    def channel_restrictions(self, channel):
        return pretty_json(channel.restrictions)

    @admin.display(description=_("alerts"))
    def channel_alerts(self, channel):
        return pretty_json(channel.alerts)

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        error = getattr(request, "_channel_error", None)
        if error is not None:  # the service refused the last save: its errors, on the form
            form = formset.form
            formset.form = type(form)(
                form.__name__, (ServiceErrorsForm, form), {"service_error": error}
            )
        return formset


class ChannelRefused(Exception):
    """The service refused the channel inline's save; the page's transaction rolls back."""

    def __init__(self, error: ValidationError):
        super().__init__(error)
        self.error = error


class ChannelKindFilter(admin.SimpleListFilter):
    title = _("channel")
    parameter_name = "channel"

    def lookups(self, request, model_admin):
        return NumberKind.choices

    def queryset(self, request, queryset):
        cloud_api = {"numbers__kind": NumberKind.CLOUD_API, "numbers__deleted_at": None}
        if self.value() == NumberKind.CLOUD_API:
            return queryset.filter(**cloud_api)
        if self.value() == NumberKind.SANDBOX:  # an organization without settings included
            return queryset.exclude(**cloud_api)
        return queryset


admin.site.unregister(Organization)


@admin.register(Organization)
class OrganizationWithChannelAdmin(OrganizationAdmin):
    """accounts' organization admin, with the channel inline, column, filter and action."""

    inlines = [ChannelInline]
    list_display = ["name", "uuid", "channel", "rate_limit", "created_at"]
    list_filter = [ChannelKindFilter]
    actions = ["sync_templates"]

    def get_queryset(self, request):
        # Each row's numbers in one query, where numbers_of finds them.
        live = Number.objects.live().order_by("-is_default", "id")
        return (
            super()
            .get_queryset(request)
            .prefetch_related(Prefetch("numbers", queryset=live, to_attr=NUMBERS_CACHE))
        )

    @admin.display(description=_("channel"))
    def channel(self, organization):
        default = default_of(organization)  # none yet: the sandbox, made when first needed
        return (default or Number()).get_kind_display()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ChannelRefused as refused:
            # Rolled back with the view's transaction, the organization's changes included;
            # the page again, with the service's errors on the channel's form.
            request._channel_error = refused.error
            return super().changeform_view(request, object_id, form_url, extra_context)

    def save_formset(self, request, form, formset, change):
        if formset.model is not Number:
            return super().save_formset(request, form, formset, change)
        # What formset.save() would note, for the admin's history of the organization.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for channel_form in formset.forms:
            if not channel_form.has_changed():
                continue
            added = channel_form.instance.pk is None
            try:
                channel = save_channel_form(form.instance, channel_form)
            except ValidationError as error:
                raise ChannelRefused(error) from None
            if added:
                formset.new_objects.append(channel)
            else:
                formset.changed_objects.append((channel, channel_form.changed_data))

    @admin.action(description=_("Sync message templates from WhatsApp"))
    def sync_templates(self, request, queryset):
        for organization in queryset:
            self.message_user(request, *sync_organization(organization))
