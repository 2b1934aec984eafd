"""The inbox in the admin, /admin/inbox/ (docs/inbox.md): the conversation list and a
conversation's page, where staff answer customers.

Live updates: every open inbox page asks `GET /admin/inbox/live/<token>` (the URL in
its `data-live-url`) every two seconds with `If-None-Match`; a 304 means nothing to
redraw (inbox/live.py says why it costs so little).

The views are thin: who may see a conversation is the inbox selectors' rule (an agent
sees the unassigned ones and their own; another's, or another organization's, is a
404), every change is an inbox service, and the admin's login, CSRF check and
organization scoping wrap every view (`admin.site.admin_view`).
"""

from typing import Any, cast
from urllib.parse import urlencode
from uuid import UUID

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_POST

from accounts.admin_scoping import is_scoped, staff_organization
from accounts.models import Organization
from accounts.roles import is_agent
from business_numbers import services as number_services
from business_numbers.gateway import ChannelNotConfigured, GatewayError
from business_numbers.models import MessageTemplate
from canned_replies.models import CannedReply
from inbox import live, selectors, services
from inbox.admin_forms import (
    AssignForm,
    LabelsForm,
    MessageForm,
    NoteForm,
    StatusForm,
    TemplateForm,
    sendable,
    with_contact,
)
from inbox.admin_timeline import timeline
from messaging_project.core.service_admin import translated
from sending import services as sending_services
from sending.admin import media_response
from sending.models import Conversation, ConversationStatus

TABS = selectors.Tab.CHOICES
CONVERSATIONS_PER_PAGE = 50
MESSAGES_PER_PAGE = 50
TAB_NAMES = {
    "mine": _("Mine"),
    "unassigned": _("Unassigned"),
    "all": _("All"),
    "resolved": _("Resolved"),
}


def list_organization(request: HttpRequest) -> Organization:
    """Whose conversations the list shows: a staff member's organization; for a
    superuser, the one chosen (`?organization=`), else the first."""
    if is_scoped(request):
        organization = staff_organization(request)
        if organization is None:
            raise PermissionDenied
        return organization
    chosen = request.GET.get("organization", "")
    organizations = Organization.objects.order_by("id")
    if chosen.isdigit():
        return get_object_or_404(organizations, pk=int(chosen))
    first = organizations.first()
    if first is None:
        raise Http404("No organization yet.")
    return first


def visible_conversation(request: HttpRequest, uuid: UUID) -> Conversation:
    """The conversation, if this staff member may see it; a 404 otherwise."""
    if is_scoped(request):
        organization = staff_organization(request)
        if organization is None:
            raise PermissionDenied
    else:
        organization = get_object_or_404(Conversation, uuid=uuid).organization
    found = (
        selectors.conversations_for(organization=organization, user=request.user)
        .select_related("contact", "number", "assignee")
        .filter(uuid=uuid)
        .first()
    )
    if found is None:
        raise Http404("No such conversation.")
    return found


def organization_staff(organization_id: int) -> QuerySet:
    return (
        get_user_model()
        .objects.filter(membership__organization_id=organization_id, is_active=True)
        .order_by("username")
    )


def page_context(request: HttpRequest, title: str) -> dict[str, Any]:
    return {**admin.site.each_context(request), "title": title}


def live_context(request: HttpRequest, **watched: int) -> dict[str, Any]:
    """What the page's script needs for its live check: the URL and the current ETag."""
    user = cast(Any, request.user)  # the admin's login let only a saved user in
    watch = live.Watch(user=user.pk, agent=is_agent(user), **watched)
    return {
        "live_url": reverse("inbox_admin:live", args=[live.token_for(watch)]),
        "live_etag": live.etag(watch) or "",
    }


@require_GET
def conversation_list(request: HttpRequest) -> HttpResponse:
    organization = list_organization(request)
    watching = live_context(request, organization=organization.pk)
    tab = request.GET.get("tab", "")
    tab = tab if tab in TABS else "all"
    query = request.GET.get("q", "").strip()[:100]
    page = request.GET.get("page", "1")
    page_number = int(page) if page.isdigit() and 0 < int(page) < 10_000 else 1
    start = (page_number - 1) * CONVERSATIONS_PER_PAGE
    found = selectors.conversations_for(
        organization=organization, user=request.user, tab=tab, search=query or None
    ).select_related("contact", "number", "assignee")
    rows = list(found[start : start + CONVERSATIONS_PER_PAGE + 1])
    kept = {"q": query} if query else {}
    if not is_scoped(request):
        kept["organization"] = str(organization.pk)

    def url(**changes: Any) -> str:
        return "?" + urlencode({**kept, "tab": tab, **changes})

    context = {
        **page_context(request, gettext("Inbox")),
        "organization": organization,
        "organizations": None if is_scoped(request) else Organization.objects.order_by("id"),
        "tabs": [(name, TAB_NAMES[name], url(tab=name)) for name in TABS],
        "tab": tab,
        "query": query,
        "rows": rows[:CONVERSATIONS_PER_PAGE],
        "now": timezone.now(),
        "previous_url": url(page=page_number - 1) if page_number > 1 else None,
        "next_url": url(page=page_number + 1) if len(rows) > CONVERSATIONS_PER_PAGE else None,
        **watching,
    }
    return TemplateResponse(request, "admin/inbox/conversation_list.html", context)


@require_GET
def conversation_page(request: HttpRequest, uuid: UUID) -> HttpResponse:
    """The timeline, the composer and the conversation's state. Opening it reads it."""
    conversation = visible_conversation(request, uuid)
    if conversation.unread:
        services.mark_read(conversation=conversation, actor=request.user)
        conversation.unread = 0
    watching = live_context(request, conversation=conversation.pk)
    chats = selectors.conversation_messages(conversation).select_related("media")
    before = request.GET.get("before", "")
    if before.isdigit():
        chats = chats.filter(id__lt=int(before))
    shown = list(chats[: MESSAGES_PER_PAGE + 1])
    older = shown[MESSAGES_PER_PAGE - 1].pk if len(shown) > MESSAGES_PER_PAGE else None
    shown = shown[:MESSAGES_PER_PAGE][::-1]
    # The notes written while the messages shown were: all of them on the newest page.
    notes = list(selectors.notes_of(conversation).select_related("author"))
    if older is not None and shown:
        notes = [note for note in notes if note.created_at >= shown[0].created_at]
    if before.isdigit() and shown:
        notes = [note for note in notes if note.created_at <= shown[-1].created_at]
    staff = organization_staff(conversation.organization_id)
    context = {
        **page_context(request, str(conversation.contact)),
        "conversation": conversation,
        "contact": conversation.contact,
        "entries": timeline(shown, notes, conversation, {user.pk: str(user) for user in staff}),
        "older_url": f"?before={older}" if older is not None else None,
        "newest_url": reverse("inbox_admin:conversation", args=[conversation.uuid])
        if before.isdigit()
        else None,
        "now": timezone.now(),
        "window_open": services.window_open(conversation),
        "message_form": MessageForm(),
        "note_form": NoteForm(),
        "assign_form": AssignForm(staff=staff, initial={"assignee": conversation.assignee_id}),
        "labels_form": LabelsForm(initial={"labels": ", ".join(conversation.labels or [])}),
        "canned_replies": canned_replies(conversation),
        **template_picker(request, conversation),
        "statuses": ConversationStatus,
        **watching,
        "list_url": reverse("inbox_admin:list"),
    }
    return TemplateResponse(request, "admin/inbox/conversation.html", context)


def canned_replies(conversation: Conversation) -> list[tuple[str, str]]:
    """The organization's text replies, (name, text with the contact's details)."""
    replies = CannedReply.objects.live().filter(organization_id=conversation.organization_id)
    return [
        (reply.name, with_contact(reply.response_text, conversation.contact))
        for reply in replies.order_by("name")
        if reply.response_type == "text"
    ]


def template_picker(request: HttpRequest, conversation: Conversation) -> dict[str, Any]:
    """The number's templates the inbox can send, and the chosen one's variables."""
    templates = [
        template
        for template in MessageTemplate.objects.live()
        .filter(number_id=conversation.number_id)
        .order_by("name", "language")
        if template.status.upper() in ("", "APPROVED") and sendable(template)
    ]
    chosen = request.GET.get("template", "")
    template = next((t for t in templates if str(t.pk) == chosen), None)
    form = TemplateForm(template=template, contact=conversation.contact) if template else None
    return {
        "templates": templates,
        "chosen_template": template,
        "template_text": (template.component("BODY") or {}).get("text", "") if template else "",
        "template_form": form,
    }


def back_to(conversation: Conversation) -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("inbox_admin:conversation", args=[conversation.uuid]))


def refused(request: HttpRequest, error: ValidationError) -> None:
    for message in translated(error).messages:
        messages.error(request, message)


def form_errors(request: HttpRequest, form) -> None:
    for field, errors in form.errors.items():
        label = form.fields[field].label if field in form.fields else ""
        for error in errors:
            messages.error(request, f"{label}: {error}" if label else error)


def changed(request: HttpRequest, conversation: Conversation, form) -> bool:
    """The change a conversation form asks for (its fields are the inbox service's), made
    by the service; what went wrong is said on the next page. True when it was made."""
    if not form.is_valid():
        form_errors(request, form)
        return False
    try:
        services.update_conversation(
            conversation=conversation, actor=request.user, **form.cleaned_data
        )
    except ValidationError as error:
        refused(request, error)
        return False
    return True


@require_POST
def assign(request: HttpRequest, uuid: UUID) -> HttpResponse:
    conversation = visible_conversation(request, uuid)
    form = AssignForm(request.POST, staff=organization_staff(conversation.organization_id))
    if not changed(request, conversation, form):
        return back_to(conversation)
    assignee = form.cleaned_data["assignee"]
    if assignee is None:
        messages.success(request, gettext("Nobody is assigned now."))
    else:
        messages.success(request, gettext("Assigned to %(name)s.") % {"name": assignee})
    if is_agent(request.user) and assignee not in (None, request.user):
        return HttpResponseRedirect(reverse("inbox_admin:list"))  # no longer theirs to see
    return back_to(conversation)


@require_POST
def set_labels(request: HttpRequest, uuid: UUID) -> HttpResponse:
    conversation = visible_conversation(request, uuid)
    if changed(request, conversation, LabelsForm(request.POST)):
        messages.success(request, gettext("Labels saved."))
    return back_to(conversation)


@require_POST
def set_status(request: HttpRequest, uuid: UUID) -> HttpResponse:
    conversation = visible_conversation(request, uuid)
    form = StatusForm(request.POST)
    if changed(request, conversation, form):
        status = ConversationStatus(form.cleaned_data["status"])
        messages.success(
            request, gettext("The conversation is %(status)s.") % {"status": status.label}
        )
    return back_to(conversation)


@require_POST
def add_note(request: HttpRequest, uuid: UUID) -> HttpResponse:
    conversation = visible_conversation(request, uuid)
    form = NoteForm(request.POST)
    if not form.is_valid():
        form_errors(request, form)
        return back_to(conversation)
    try:
        services.add_note(
            conversation=conversation, author=request.user, body=form.cleaned_data["body"]
        )
    except ValidationError as error:
        refused(request, error)
    return back_to(conversation)


@require_POST
def send_message(request: HttpRequest, uuid: UUID) -> HttpResponse:
    """A text, or an uploaded file (put on the number's channel first) with the text
    as its caption."""
    conversation = visible_conversation(request, uuid)
    form = MessageForm(request.POST, request.FILES)
    if not form.is_valid():
        form_errors(request, form)
        return back_to(conversation)
    reply_to = str(form.cleaned_data["reply_to"] or "") or None
    text = form.cleaned_data["message"]
    upload = form.cleaned_data["attachment"]
    if upload is None:
        send(request, conversation, message=text, reply_to=reply_to)
        return back_to(conversation)
    try:
        uploaded = number_services.upload_media(
            number=conversation.number,
            content=upload.read(),
            mime_type=upload.content_type or "",
            file_name=upload.name,
        )
    except ValidationError as error:
        refused(request, error)
        return back_to(conversation)
    except GatewayError as error:
        messages.error(
            request, gettext("WhatsApp refused the file: %(reason)s") % {"reason": error.message}
        )
        return back_to(conversation)
    media = {"media_type": uploaded.media_type, "media_id": uploaded.media_id}
    if uploaded.media_type == "document":
        media["file_name"] = upload.name
    if text and uploaded.media_type != "audio":  # WhatsApp shows no caption on audio
        media["caption"] = text
    send(request, conversation, media=media, reply_to=reply_to)
    if text and uploaded.media_type == "audio":
        send(request, conversation, message=text, reply_to=None)
    return back_to(conversation)


@require_POST
def send_template(request: HttpRequest, uuid: UUID) -> HttpResponse:
    conversation = visible_conversation(request, uuid)
    template = get_object_or_404(
        MessageTemplate.objects.live().filter(number_id=conversation.number_id),
        pk=request.POST.get("template") if str(request.POST.get("template")).isdigit() else 0,
    )
    form = TemplateForm(request.POST, template=template, contact=conversation.contact)
    if not form.is_valid():
        form_errors(request, form)
        return back_to(conversation)
    send(request, conversation, template=form.sent_template())
    return back_to(conversation)


def send(request: HttpRequest, conversation: Conversation, **what: Any) -> None:
    """Send through the inbox service; say what became of it on the next page."""
    try:
        services.send_in_conversation(conversation=conversation, actor=request.user, **what)
    except ValidationError as error:
        refused(request, error)
    except ChannelNotConfigured:
        messages.error(request, gettext("This number cannot send: its channel is not set up."))
    except sending_services.ServiceWindowClosed:
        messages.error(
            request,
            gettext(
                "The customer last wrote more than 24 hours ago: only a template can be "
                "sent until they write again."
            ),
        )
    except number_services.TemplateNotApproved as error:
        messages.error(request, gettext(str(error.message)))
    except sending_services.SendFailed as failed:
        messages.error(
            request,
            gettext("WhatsApp refused the message: %(reason)s") % {"reason": failed.error.message},
        )
    except sending_services.SendNotRecorded:
        messages.warning(
            request,
            gettext(
                "WhatsApp did not answer in time: the message may or may not have been "
                "sent. Look for it in the timeline before sending it again."
            ),
        )


@require_GET
def media(request: HttpRequest, uuid: UUID, chat: UUID) -> HttpResponseBase:
    """A customer's image, voice note, video or document in the timeline: for whoever may
    see the conversation (the chats' own admin pages are closed to agents)."""
    conversation = visible_conversation(request, uuid)
    found = selectors.conversation_messages(conversation).filter(uuid=chat).first()
    if found is None:
        raise Http404("No such message in this conversation.")
    return media_response(found)


@require_GET
def live_changes(request: HttpRequest, token: str) -> HttpResponse:
    """The live check of an open inbox page (inbox/live.py). inbox/middleware.py answers
    GETs before the admin's middleware; this view is its URL and answers the rest (405)."""
    return live.answer(token, request.META.get("HTTP_IF_NONE_MATCH"))
