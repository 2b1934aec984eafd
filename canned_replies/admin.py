"""Canned replies in the staff admin: the API's request fields instead of raw JSON,
saves through canned_replies.services, and a box to test which reply answers a message."""

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied, ValidationError
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.text import Truncator
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin_scoping import (
    AgentAccess,
    OrganizationScopedAdmin,
    is_scoped,
    staff_organization,
)
from accounts.models import Organization
from canned_replies import services
from canned_replies.matching import find_reply
from canned_replies.models import CannedReply, ResponseType
from messaging_project.core.service_admin import adopt, translated


class CannedReplyForm(forms.ModelForm):
    """`response` and `response_type` as in the API; the service stores them as metadata."""

    response_type = forms.ChoiceField(
        label=_("Response type"), choices=ResponseType.choices, initial=ResponseType.TEXT
    )
    response = forms.CharField(
        label=_("Response"),
        max_length=4096,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_(
            "The text sent back when a message matches, where {first_name}, {full_name}, "
            "{city} and the other placeholders are filled from the contact; for an image, "
            "audio, document or video reply, the https URL WhatsApp fetches the file from; "
            "for an interactive reply, WhatsApp's interactive object as JSON (buttons, a "
            "list...)."
        ),
    )

    class Meta:
        model = CannedReply
        fields = ["organization", "name", "trigger", "match_criteria"]
        help_texts = {
            "trigger": _(
                "Compared ignoring case and extra spaces; commas separate alternatives "
                "(hi,hello,hey). With the button criterion: the exact id of a button or "
                "list row, or a quick-reply button's payload."
            )
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["response"] = self.instance.response_text
            self.initial["response_type"] = self.instance.response_type

    def clean(self):
        """An interactive reply's limits, shown on the response with the place named."""
        data = super().clean()
        if data.get("response_type") == ResponseType.INTERACTIVE and data.get("response"):
            try:
                services.check_interactive(data["response"])
            except ValidationError as error:
                for path, messages in translated(error).message_dict.items():
                    place = path.removeprefix("response").lstrip(".")
                    for message in messages:
                        self.add_error("response", f"{place}: {message}" if place else message)
        return data


class TestMessageForm(forms.Form):
    organization = forms.ModelChoiceField(
        label=_("Organization"), queryset=Organization.objects.all()
    )
    message = forms.CharField(
        label=_("Message"),
        max_length=4096,
        widget=forms.TextInput(attrs={"size": 60, "autofocus": True}),
    )


@admin.register(CannedReply)
class CannedReplyAdmin(OrganizationScopedAdmin):
    agent_access = AgentAccess.VIEW  # agents use them (and test a message), not edit
    form = CannedReplyForm
    fields = ["organization", "name", "trigger", "match_criteria", "response_type", "response"]
    list_display = ["name", "trigger", "match_criteria", "response_preview", "updated_at"]
    list_filter = ["match_criteria"]
    search_fields = ["name", "trigger"]
    ordering = ["-id"]
    # The preview of what WhatsApp shows, drawn as the staff member types.
    change_form_template = "admin/canned_replies/cannedreply/change_form.html"

    @admin.display(description=_("response"))
    def response_preview(self, reply):
        return Truncator(reply.response_text).chars(60)

    def save_through_service(self, request, obj, form, change):
        data = form.cleaned_data
        fields = ("name", "trigger", "match_criteria", "response_type", "response")
        if change:
            changes = {name: data[name] for name in fields if name in form.changed_data}
            services.update_canned_reply(reply=obj, changes=changes)
            return
        reply = services.create_canned_reply(
            organization=self.organization_for_new_record(request, form),
            created_by=request.user.pk,
            **{name: data[name] for name in fields},
        )
        adopt(obj, reply)

    def soft_delete(self, request, obj):
        services.delete_canned_reply(reply=obj, deleted_by=request.user.pk)

    # "Test a message": which of the organization's replies would answer it.

    def get_urls(self):
        view = self.admin_site.admin_view(self.test_message_view)
        return [
            path("test-message/", view, name="canned_replies_cannedreply_test_message"),
            *super().get_urls(),
        ]

    def test_message_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = TestMessageForm(request.GET or None)
        if is_scoped(request):
            del form.fields["organization"]
        reply = None
        if form.is_valid():
            organization = form.cleaned_data.get("organization") or staff_organization(request)
            reply = find_reply(organization=organization, text=form.cleaned_data["message"])
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": gettext("Test a message"),
            "form": form,
            "tested": form.is_bound and form.is_valid(),
            "reply": reply,
            "reply_url": (
                reverse("admin:canned_replies_cannedreply_change", args=[reply.pk])
                if reply
                else None
            ),
        }
        template = "admin/canned_replies/cannedreply/test_message.html"
        return TemplateResponse(request, template, context)
