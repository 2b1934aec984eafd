"""Chats, auto-replies and message templates in the staff admin.

All are written by the channel, not by people: chats by sends and webhooks,
auto-replies by the webhook and their task, templates by the sync from WhatsApp. So
all are read-only here; templates have a
"Sync from WhatsApp" button (and superusers an action on organizations).
"""

import json

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from accounts.admin_scoping import OrganizationScopedAdmin, is_scoped, staff_organization
from sending import services
from sending.gateway import ChannelNotConfigured, GatewayError
from sending.models import AutoReply, Chat, MessageTemplate


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
        "error_code",
        "error_title",
        "error",
    ]
    readonly_fields = fields

    @admin.display(description="message")
    def message(self, chat):
        return pretty_json(chat.metadata)

    @admin.display(description="channel error")
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

    @admin.display(description="contact")
    def contact(self, auto_reply):
        return auto_reply.inbound.contact


def sync_organization(request, organization) -> tuple[str, int]:
    """Sync one organization's templates; a message for the user and its level."""
    try:
        result = services.sync_templates(organization=organization)
    except (GatewayError, ChannelNotConfigured) as error:
        return f"{organization}: WhatsApp did not give the templates: {error}", messages.ERROR
    return (
        f"{organization}: {result.created} template(s) added, {result.updated} updated, "
        f"{result.removed} removed.",
        messages.SUCCESS,
    )


@admin.register(MessageTemplate)
class MessageTemplateAdmin(ReadOnlyAdmin):
    list_display = ["name", "language", "category", "status", "updated_at"]
    list_filter = ["status", "category", "language"]
    search_fields = ["name"]
    ordering = ["name", "language"]
    fields = [
        "organization",
        "name",
        "language",
        "category",
        "status",
        "external_id",
        "updated_at",
        "template_components",
    ]
    readonly_fields = fields

    @admin.display(description="components")
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
        text, level = sync_organization(request, organization)
        self.message_user(request, text, level)
        return HttpResponseRedirect(reverse("admin:sending_messagetemplate_changelist"))
