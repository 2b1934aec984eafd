"""Chats, auto-replies and unhandled webhook items in the staff admin.

They are written by the channel, not by people: chats by sends and webhooks,
auto-replies by the webhook and their task. So all are read-only here.
"""

from django.contrib import admin
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from business_numbers.admin import ReadOnlyAdmin, pretty_json
from sending.media_names import download_name
from sending.models import AutoReply, Chat, MediaState, UnhandledWebhookItem
from sending.readable import readable

# The kinds of an inbound message's media, as the chat page names them.
MEDIA_KINDS = {
    "image": _("image"),
    "audio": _("audio"),
    "video": _("video"),
    "document": _("document"),
    "sticker": _("sticker"),
}


@admin.register(Chat)
class ChatAdmin(ReadOnlyAdmin):
    """Chats, read-only; an inbound chat's media with a link that opens the stored file
    (through the admin, so only staff who may see the chat can open it)."""

    list_display = ["created_at", "contact", "type", "status", "error_code", "error_title"]
    list_filter = ["status", "type"]
    list_select_related = ["contact"]
    search_fields = ["wam_id", "contact__phone", "contact__first_name", "contact__last_name"]
    ordering = ["-id"]
    shown = [
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
    readonly_fields = [*shown, "recorded_metadata"]
    fieldsets = [
        (None, {"fields": shown}),  # type: ignore[typeddict-item]  # names only, no groups
        # What was sent or received, as recorded: for whoever needs every field.
        (_("As recorded"), {"fields": ["recorded_metadata"], "classes": ["collapse"]}),
    ]

    @admin.display(description=_("message"))
    def message(self, chat):
        """The message as it reads (sending/readable.py), not its JSON."""
        message = readable(chat.metadata)
        shown = any(
            [
                message.template,
                message.choice,
                message.media_kind,
                message.header,
                message.body,
                message.buttons,
                message.location,
                message.reaction,
                message.answers,
            ]
        )
        media_label = MEDIA_KINDS.get(message.media_kind, message.media_kind)
        return render_to_string(
            "admin/sending/chat/message.html",
            {"message": message, "shown": shown, "media_label": capfirst(media_label)},
        )

    @admin.display(description=_("metadata"))
    def recorded_metadata(self, chat):
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
        return media_response(chat)

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
    readonly_fields = fields  # type: ignore[assignment]  # names only, no groups

    @admin.display(description=_("contact"))
    def contact(self, auto_reply):
        return auto_reply.inbound.contact


@admin.register(UnhandledWebhookItem)
class UnhandledWebhookItemAdmin(ReadOnlyAdmin):
    """What WhatsApp sent that the service does not handle, field by field."""

    list_display = ["field", "count", "first_seen", "last_seen"]
    list_filter = ["field"]
    search_fields = ["field"]
    ordering = ["-last_seen"]
    fields = ["organization", "field", "count", "first_seen", "last_seen", "payload"]
    readonly_fields = fields  # type: ignore[assignment]  # names only, no groups

    @admin.display(description=_("last payload"))
    def payload(self, item):
        return pretty_json(item.last_payload)


def media_response(chat: Chat) -> FileResponse:
    """An inbound chat's stored media, for a staff member the caller let see the chat
    (this page, the inbox): shown inline (an image, a video, a voice note), a document
    downloaded; a 404 while it is not stored."""
    media = chat.media
    if media is None or media.state != MediaState.AVAILABLE or not media.file.name:
        raise Http404("The chat's media is not available.")
    try:
        stored = default_storage.open(media.file.name, "rb")
    except FileNotFoundError:
        raise Http404("The media file is missing from storage.") from None
    response = FileResponse(
        stored,
        as_attachment=media.kind == "document",
        filename=download_name(media, chat),
        content_type=media.mime_type or "application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox"
    return response


# The channel settings, on the organization's page.
