"""Event webhook endpoints and their deliveries in the staff admin.

Endpoints are saved through events.services, as the API saves them (the URL rule, the
limit of ten, soft deletion). Deliveries are written by emission and the delivery task,
so they are read-only here, with one action: "send again", which queues one more
attempt with the same `webhook-id`. An endpoint turned off (by the organization, or
after five days of failures) is turned on again by its form or the "turn on" action.
"""

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from accounts.admin_scoping import OrganizationScopedAdmin
from events import services
from events.models import Delivery, Endpoint, Event, Format
from messaging_project.core.public_urls import url_error
from messaging_project.core.service_admin import adopt


class EndpointForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=Event.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("None ticked: every event."),
    )

    class Meta:
        model = Endpoint
        fields = ["organization", "url", "events", "format", "is_active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "format" in self.fields:  # left out of a post: the default, as in the API
            self.fields["format"].required = False

    def clean_format(self):
        return self.cleaned_data.get("format") or Format.STANDARD

    def clean_url(self):
        url = self.cleaned_data["url"].strip()
        error = url_error(url)
        if error is not None:
            raise ValidationError(gettext(error.message), params=error.params)
        return url


@admin.register(Endpoint)
class EndpointAdmin(OrganizationScopedAdmin):
    form = EndpointForm
    list_display = [
        "url",
        "subscribed",
        "format",
        "is_active",
        "disabled_reason",
        "updated_at",
    ]
    list_filter = ["is_active", "format"]
    search_fields = ["url"]
    ordering = ["-id"]
    readonly_fields = [
        "secret",
        "disabled_reason",
        "disabled_at",
        "failing_since",
        "failures_in_a_row",
        "open_until",
        "times_opened",
        "created_at",
        "updated_at",
    ]
    actions = ["turn_on", "rotate_secrets"]

    @admin.display(description=_("events"))
    def subscribed(self, endpoint):
        return ", ".join(endpoint.events) or gettext("all")

    def save_through_service(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            fields = ("url", "events", "format", "is_active")
            changes = {name: data[name] for name in fields if name in form.changed_data}
            services.update_endpoint(endpoint=obj, changes=changes)
            return
        endpoint = services.create_endpoint(
            organization=self.organization_for_new_record(request, form),
            url=data["url"],
            events=data["events"],
            format=data["format"],
            created_by=request.user.pk,
        )
        adopt(obj, endpoint)

    def soft_delete(self, request, obj):
        services.delete_endpoint(endpoint=obj)

    @admin.action(description=_("Turn on again (forgets why it was turned off)"))
    def turn_on(self, request, queryset):
        count = 0
        for endpoint in queryset.filter(is_active=False):
            try:
                services.update_endpoint(endpoint=endpoint, changes={"is_active": True})
            except Http404:  # deleted meanwhile
                continue
            count += 1
        message = ngettext(
            "%(count)d endpoint turned on again.", "%(count)d endpoints turned on again.", count
        )
        self.message_user(request, message % {"count": count}, messages.SUCCESS)

    @admin.action(description=_("Rotate the secret (the old one still signs for 24 hours)"))
    def rotate_secrets(self, request, queryset):
        for endpoint in queryset:
            services.rotate_secret(endpoint=endpoint)
        count = len(queryset)
        message = ngettext("%(count)d secret rotated.", "%(count)d secrets rotated.", count)
        self.message_user(request, message % {"count": count}, messages.SUCCESS)


@admin.register(Delivery)
class DeliveryAdmin(OrganizationScopedAdmin):
    list_display = [
        "created_at",
        "event",
        "endpoint",
        "status",
        "attempts",
        "response_status",
        "next_attempt_at",
    ]
    list_filter = ["status", "event"]
    list_select_related = ["endpoint"]
    search_fields = ["msg_id"]
    ordering = ["-id"]
    fields = [
        "organization",
        "endpoint",
        "msg_id",
        "event",
        "status",
        "attempts",
        "response_status",
        "last_error",
        "next_attempt_at",
        "created_at",
        "updated_at",
        "payload",
    ]
    readonly_fields = fields  # type: ignore[assignment]  # names only, no groups
    actions = ["send_again"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description=_("body"))
    def payload(self, delivery):
        return format_html(
            "<pre>{}</pre>", json.dumps(json.loads(delivery.body), indent=2, ensure_ascii=False)
        )

    @admin.action(description=_("Send again (same webhook-id)"), permissions=["view"])
    def send_again(self, request, queryset):
        queued = sum(services.send_again(delivery=delivery) for delivery in queryset)
        skipped = len(queryset) - queued
        message = ngettext(
            "%(count)d delivery queued to be sent again.",
            "%(count)d deliveries queued to be sent again.",
            queued,
        ) % {"count": queued}
        if skipped:
            message += " " + ngettext(
                "%(count)d skipped: an attempt is under way.",
                "%(count)d skipped: an attempt is under way.",
                skipped,
            ) % {"count": skipped}
        self.message_user(request, message, messages.SUCCESS if queued else messages.WARNING)
