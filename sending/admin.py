"""The WhatsApp channel on the organization's admin page; chats, auto-replies and
message templates in the staff admin.

(Over 400 lines: the channel inline and the app's admin pages, one section each.)

The channel settings are an inline of the organization (superusers only), saved
through sending.services.configure_channel; their secrets are write-only. Sending
re-registers accounts' organization admin with the inline, a channel column and
filter, and the "Sync message templates" action.

Chats, auto-replies and templates are written by the channel, not by people: chats by
sends and webhooks, auto-replies by the webhook and their task, templates by the sync
from WhatsApp. So all are read-only here; templates have a "Sync from WhatsApp" button
(and superusers the action on organizations).
"""

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin import OrganizationAdmin
from accounts.admin_scoping import OrganizationScopedAdmin, is_scoped, staff_organization
from accounts.models import Organization
from messaging_project.core.service_admin import ServiceErrorsForm
from sending import services
from sending.gateway import ChannelNotConfigured, GatewayError
from sending.models import (
    AutoReply,
    Channel,
    ChannelKind,
    Chat,
    MediaState,
    MessageTemplate,
    UnhandledWebhookItem,
)
from sending.services.media import download_name

# The kinds of an inbound message's media, as the chat page names them.
MEDIA_KINDS = {
    "image": _("image"),
    "audio": _("audio"),
    "video": _("video"),
    "document": _("document"),
    "sticker": _("sticker"),
}


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


@admin.register(Chat)
class ChatAdmin(ReadOnlyAdmin):
    """Chats, read-only; an inbound chat's media with a link that opens the stored file
    (through the admin, so only staff who may see the chat can open it)."""

    list_display = ["created_at", "contact", "type", "status", "error_code", "error_title"]
    list_filter = ["status", "type"]
    list_select_related = ["contact"]
    search_fields = ["wam_id", "contact__phone", "contact__first_name", "contact__last_name"]
    ordering = ["-id"]
    fields = [
        "organization",
        "contact",
        "type",
        "status",
        "wam_id",
        "created_at",
        "message",
        "media_file",
        "error_code",
        "error_title",
        "error",
    ]
    readonly_fields = fields

    @admin.display(description=_("message"))
    def message(self, chat):
        return pretty_json(chat.metadata)

    @admin.display(description=_("media"))
    def media_file(self, chat):
        media = chat.media
        if media is None:
            return "-"
        if media.state != MediaState.AVAILABLE:
            shown = gettext("%(kind)s, %(status)s (attempts: %(attempts)d)") % {
                "kind": MEDIA_KINDS.get(media.kind, media.kind),
                "status": MediaState(media.status).label,
                "attempts": media.attempts,
            }
            return f"{shown}: {media.last_error}" if media.last_error else shown
        url = reverse("admin:sending_chat_media", args=[chat.pk])
        return format_html(
            '<a href="{}">{}</a>',
            url,
            gettext("Open the %(kind)s (%(type)s, %(size)s bytes)")
            % {
                "kind": MEDIA_KINDS.get(media.kind, media.kind),
                "type": media.mime_type,
                "size": media.size,
            },
        )

    def get_urls(self):
        view = self.admin_site.admin_view(self.media_view)
        return [path("<int:pk>/media/", view, name="sending_chat_media"), *super().get_urls()]

    def media_view(self, request, pk):
        # get_object goes through the staff member's organization: another's chat is a 404.
        chat = self.get_object(request, str(pk))
        if chat is None or not self.has_view_permission(request, chat):
            raise Http404("No such chat.")
        media = chat.media
        if media is None or media.state != MediaState.AVAILABLE:
            raise Http404("The chat's media is not available.")
        try:
            stored = default_storage.open(media.file.name, "rb")
        except FileNotFoundError:
            raise Http404("The media file is missing from storage.") from None
        # Shown inline (an image, a video, a voice note); a document downloads.
        response = FileResponse(
            stored,
            as_attachment=media.kind == "document",
            filename=download_name(media, chat),
            content_type=media.mime_type or "application/octet-stream",
        )
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "sandbox"
        return response

    @admin.display(description=_("channel error"))
    def error(self, chat):
        return pretty_json(chat.error_details)


@admin.register(AutoReply)
class AutoReplyAdmin(ReadOnlyAdmin):
    """What became of each canned reply owed to an inbound message. `unknown`: its send
    was under way when its worker died, so it may or may not have reached the customer."""

    list_display = ["created_at", "contact", "state", "attempts", "last_error"]
    list_filter = ["state"]
    list_select_related = ["inbound__contact"]
    ordering = ["-id"]
    fields = [
        "organization",
        "inbound",
        "canned_reply",
        "message",
        "state",
        "attempts",
        "reply",
        "last_error",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    @admin.display(description=_("contact"))
    def contact(self, auto_reply):
        return auto_reply.inbound.contact


def sync_organization(organization) -> tuple[str, int]:
    """Sync one organization's templates; a message for the user and its level."""
    try:
        result = services.sync_templates(organization=organization)
    except (GatewayError, ChannelNotConfigured) as error:
        text = gettext("%(organization)s: WhatsApp did not give the templates: %(error)s")
        return text % {"organization": organization, "error": error}, messages.ERROR
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
    list_display = ["name", "language", "category", "status", "quality", "updated_at"]
    list_filter = ["status", "category", "language"]
    search_fields = ["name"]
    ordering = ["name", "language"]
    fields = [
        "organization",
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
    readonly_fields = fields

    @admin.display(description=_("components"))
    def template_components(self, template):
        return pretty_json(template.components)

    def get_urls(self):
        view = self.admin_site.admin_view(self.sync_view)
        return [
            path("sync/", view, name="sending_messagetemplate_sync"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        # The button syncs the staff member's organization; superusers use the
        # action on organizations instead.
        extra_context = {**(extra_context or {}), "can_sync": is_scoped(request)}
        return super().changelist_view(request, extra_context)

    def sync_view(self, request):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        organization = staff_organization(request)
        if organization is None or not self.has_view_permission(request):
            raise PermissionDenied
        text, level = sync_organization(organization)
        self.message_user(request, text, level)
        return HttpResponseRedirect(reverse("admin:sending_messagetemplate_changelist"))


@admin.register(UnhandledWebhookItem)
class UnhandledWebhookItemAdmin(ReadOnlyAdmin):
    """What WhatsApp sent that the service does not handle, field by field."""

    list_display = ["field", "count", "first_seen", "last_seen"]
    list_filter = ["field"]
    search_fields = ["field"]
    ordering = ["-last_seen"]
    fields = ["organization", "field", "count", "first_seen", "last_seen", "payload"]
    readonly_fields = fields

    @admin.display(description=_("last payload"))
    def payload(self, item):
        return pretty_json(item.last_payload)


# The channel settings, on the organization's page.


def secret_field(label: str) -> forms.CharField:
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
        model = Channel
        fields = [
            "kind",
            "phone_number_id",
            "business_account_id",
            *Channel.SECRET_FIELDS,
            "enforce_service_window",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stored = {name: getattr(self.instance, name) for name in Channel.SECRET_FIELDS}
        for name in Channel.SECRET_FIELDS:
            self.fields[name].help_text = (
                _("A value is stored; leave empty to keep it.")
                if self.stored[name]
                else _("Not set. Stored, never shown again.")
            )
            # The stored secret must not travel back to the page as the initial value.
            self.initial.pop(name, None)


def save_channel_form(organization: Organization, form: ChannelForm) -> Channel:
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


def save_channel_credentials(organization: Organization, form: ChannelForm) -> Channel:
    data = form.cleaned_data
    if data["kind"] == ChannelKind.CLOUD_API:
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
    model = Channel
    form = ChannelForm
    can_delete = False
    max_num = 1
    verbose_name = verbose_name_plural = _("WhatsApp channel")
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
                "fields": ChannelForm.Meta.fields,
                "description": _(
                    "The sandbox keeps messages on this server. The Cloud API "
                    "needs the phone number id and an access token from Meta."
                ),
            },
        ),
        (
            _("The number's health"),
            {
                "fields": HEALTH_FIELDS,
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
        return ChannelKind.choices

    def queryset(self, request, queryset):
        cloud_api = {"channel_settings__kind": ChannelKind.CLOUD_API}
        if self.value() == ChannelKind.CLOUD_API:
            return queryset.filter(**cloud_api)
        if self.value() == ChannelKind.SANDBOX:  # an organization without settings included
            return queryset.exclude(**cloud_api)
        return queryset


admin.site.unregister(Organization)


@admin.register(Organization)
class OrganizationWithChannelAdmin(OrganizationAdmin):
    """accounts' organization admin, with the channel inline, column, filter and action."""

    inlines = [ChannelInline]
    list_display = ["name", "uuid", "channel", "rate_limit", "created_at"]
    list_select_related = ["channel_settings"]
    list_filter = [ChannelKindFilter]
    actions = ["sync_templates"]

    @admin.display(description=_("channel"), ordering="channel_settings__kind")
    def channel(self, organization):
        return Channel.of(organization).get_kind_display()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ChannelRefused as refused:
            # Rolled back with the view's transaction, the organization's changes included;
            # the page again, with the service's errors on the channel's form.
            request._channel_error = refused.error
            return super().changeform_view(request, object_id, form_url, extra_context)

    def save_formset(self, request, form, formset, change):
        if formset.model is not Channel:
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
