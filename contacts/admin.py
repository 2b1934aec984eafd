"""Contacts and contact groups in the staff admin, saved through contacts.services.

(Over 400 lines: the import and export views sit beside the contact admin that links to them.)
"""

import re
from typing import cast

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin_scoping import (
    AgentAccess,
    OrganizationRelatedFilter,
    OrganizationScopedAdmin,
    is_scoped,
    scoped_queryset,
    staff_organization,
)
from accounts.models import Organization
from contacts import imports, opt_outs, services, tasks
from contacts.api.transfer import export_response
from contacts.models import Contact, ContactGroup, ContactImport, OnDuplicate, OptOutWords
from contacts.representations import ADDRESS_KEYS
from messaging_project.core.phones import PHONE_CHARACTERS, InvalidPhoneNumber, normalize_phone
from messaging_project.core.service_admin import adopt, translated

IMPORT_COUNTS = ["created", "updated", "skipped", "failed"]


class ContactForm(forms.ModelForm):
    """The API's rules: phone normalised with libphonenumber, first name required on
    create, blank text stored as null, the address as its five parts."""

    phone = forms.CharField(
        label=_("Phone"),
        max_length=32,
        help_text=_("With its country code, for example +49 151 23456789."),
    )
    street = forms.CharField(label=_("Street"), max_length=255, required=False)
    city = forms.CharField(label=_("City"), max_length=255, required=False)
    state = forms.CharField(label=_("State"), max_length=255, required=False)
    zip = forms.CharField(label=_("ZIP"), max_length=255, required=False)
    country = forms.CharField(label=_("Country"), max_length=255, required=False)

    class Meta:
        model = Contact
        fields = [
            "organization",
            "first_name",
            "last_name",
            "phone",
            "email",
            "contact_group",
            "is_favorite",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        contact = self.instance
        if contact.pk:
            self.initial["phone"] = f"+{contact.phone}" if contact.phone else ""
            for key, value in (contact.address or {}).items():
                if key in ADDRESS_KEYS:
                    self.initial[key] = value
        elif "first_name" in self.fields:
            self.fields["first_name"].required = True

    def clean_phone(self):
        try:
            return normalize_phone(self.cleaned_data["phone"])
        except InvalidPhoneNumber as error:
            raise forms.ValidationError(gettext(str(error))) from None

    def clean(self):
        data = super().clean()
        for field in ("first_name", "last_name", "email"):
            if data.get(field) == "":
                data[field] = None
        # A superuser adding a contact picks the organization; its group must match.
        organization = data.get("organization") or getattr(self.instance, "organization", None)
        group = data.get("contact_group")
        if group and organization and group.organization_id != organization.pk:
            self.add_error("contact_group", gettext("This group belongs to another organization."))
        return data

    def address(self) -> dict | None:
        parts = {key: self.cleaned_data.get(key) or None for key in ADDRESS_KEYS}
        return parts if any(parts.values()) else None


@admin.register(Contact)
class ContactAdmin(OrganizationScopedAdmin):
    agent_access = AgentAccess.ALL  # but not the import and export (below)
    form = ContactForm
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "organization",
                    "first_name",
                    "last_name",
                    "phone",
                    "email",
                    "contact_group",
                    "is_favorite",
                ]
            },
        ),
        (_("Address"), {"fields": list(ADDRESS_KEYS), "classes": ["collapse"]}),
    ]
    list_display = ["name", "phone_number", "email", "contact_group", "favourite", "updated"]
    list_display_links = ["name", "phone_number"]
    list_filter = [
        ("contact_group", OrganizationRelatedFilter),
        ("is_favorite", admin.BooleanFieldListFilter),
    ]
    list_select_related = ["contact_group"]
    search_fields = ["first_name", "last_name", "phone", "email"]
    ordering = ["-id"]
    list_per_page = 50

    @admin.display(description=_("name"), ordering="first_name")
    def name(self, contact):
        return contact.full_name.strip() or "-"

    @admin.display(description=_("phone"), ordering="phone")
    def phone_number(self, contact):
        # A user whose number WhatsApp withholds is known by their WhatsApp user id.
        return f"+{contact.phone}" if contact.phone else contact.user_id or "-"

    @admin.display(description=_("favourite"), boolean=True, ordering="is_favorite")
    def favourite(self, contact):
        return contact.is_favorite

    @admin.display(description=_("updated"), ordering="updated_at")
    def updated(self, contact):
        return contact.updated_at.date()

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path(
                "import/",
                view(lambda request: import_contacts_view(self, request)),
                name="contacts_contact_import",
            ),
            path(
                "export/",
                view(lambda request: export_contacts_view(self, request)),
                name="contacts_contact_export",
            ),
            *super().get_urls(),
        ]

    def get_search_results(self, request, queryset, search_term):
        # Phones are stored as digits: a term written only with a phone's characters,
        # "+49 151 234", finds 49151234...
        if PHONE_CHARACTERS.match(search_term.strip()):
            search_term = re.sub(r"\D", "", search_term)
        return super().get_search_results(request, queryset, search_term)

    def save_through_service(self, request, obj, form, change):
        data = form.cleaned_data
        values = {
            name: data[name]
            for name in ("first_name", "last_name", "phone", "email", "contact_group")
            if name in data
        }
        values["is_favorite"] = data.get("is_favorite", False)
        values["address"] = form.address()
        if not change:
            contact = services.create_contact(
                organization=self.organization_for_new_record(request, form),
                created_by=request.user.pk,
                **values,
            )
            adopt(obj, contact)
            return
        changed = set(form.changed_data)
        if changed & set(ADDRESS_KEYS):
            changed.add("address")
        services.update_contact(
            contact=obj, changes={name: value for name, value in values.items() if name in changed}
        )

    def soft_delete(self, request, obj):
        services.delete_contact(contact=obj)


class ContactGroupForm(forms.ModelForm):
    class Meta:
        model = ContactGroup
        fields = ["organization", "name"]


@admin.register(ContactGroup)
class ContactGroupAdmin(OrganizationScopedAdmin):
    agent_access = AgentAccess.ALL
    form = ContactGroupForm
    list_display = ["name", "contact_count", "created_at"]
    search_fields = ["name"]
    ordering = ["name"]

    def get_queryset(self, request):
        # One query for the counts of the whole page; deleted contacts do not count.
        live_contacts = Count("contacts", filter=Q(contacts__deleted_at__isnull=True))
        return super().get_queryset(request).annotate(contact_count=live_contacts)

    @admin.display(description=_("contacts"), ordering="contact_count")
    def contact_count(self, group):
        return group.contact_count

    def save_through_service(self, request, obj, form, change):
        if change:
            services.update_contact_group(group=obj, changes={"name": form.cleaned_data["name"]})
            return
        group = services.create_contact_group(
            organization=self.organization_for_new_record(request, form),
            name=form.cleaned_data["name"],
            created_by=request.user.pk,
        )
        adopt(obj, group)

    def soft_delete(self, request, obj):
        # Its contacts stay, without a group.
        services.delete_contact_group(group=obj)


@admin.register(OptOutWords)
class OptOutWordsAdmin(OrganizationScopedAdmin):
    """The words besides STOP and START that opt contacts out of campaigns and back in."""

    fields = ["organization", "stop_words", "start_words"]
    list_display = ["organization", "stop_words", "start_words"]

    def save_through_service(self, request, obj, form, change):
        words = opt_outs.save_opt_out_words(
            organization=obj.organization
            if change
            else self.organization_for_new_record(request, form),
            stop_words=form.cleaned_data["stop_words"],
            start_words=form.cleaned_data["start_words"],
        )
        adopt(obj, words)


class ContactImportForm(forms.Form):
    """The admin's import: the API's file and options (contacts.imports reads the file)."""

    organization: "forms.ModelChoiceField[Organization]" = forms.ModelChoiceField(
        queryset=None, label=_("Organization")
    )
    file = forms.FileField(label=_("CSV or Excel file"))
    on_duplicate = forms.ChoiceField(
        label=_("Numbers already there"),
        choices=OnDuplicate.choices,
        initial=OnDuplicate.SKIP,
        help_text=_("Skip leaves those contacts as they are; update writes the file's values."),
    )
    contact_group: "forms.ModelChoiceField[ContactGroup]" = forms.ModelChoiceField(
        queryset=None,
        required=False,
        label=_("Contact group"),
        help_text=_("Every imported contact joins it (a row's own group column wins)."),
    )

    def __init__(self, *args, organizations, groups, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["contact_group"].queryset = groups
        if organizations is None:
            del self.fields["organization"]
        else:
            self.fields["organization"].queryset = organizations

    def clean(self):
        data = super().clean()
        organization, group = data.get("organization"), data.get("contact_group")
        if organization and group and group.organization_id != organization.pk:
            self.add_error("contact_group", gettext("This group belongs to another organization."))
        upload = data.get("file")
        if upload is not None:
            try:
                data["checked_file"] = imports.checked_file(upload)
            except imports.ImportRefused as refused:
                self.add_error(None, translated(refused))
        return data


def import_contacts_view(model_admin: "ContactAdmin", request):
    """Upload a file: read and checked here, imported by the same task as the API's, then
    the import's progress page."""
    if not (
        model_admin.has_add_permission(request) and model_admin.has_manager_permission(request)
    ):
        raise PermissionDenied
    scoped = is_scoped(request)
    organization = staff_organization(request)
    form = ContactImportForm(
        request.POST or None,
        request.FILES or None,
        organizations=None if scoped else Organization.objects.order_by("name"),
        groups=scoped_queryset(ContactGroup.objects.all(), request),
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        contact_import = tasks.start_contact_import(
            # Scoped, has_add_permission above admitted only a member.
            organization=cast(Organization, organization) if scoped else data["organization"],
            file=data["checked_file"],
            on_duplicate=data["on_duplicate"],
            contact_group=data["contact_group"],
            file_name=data["file"].name or "",
            created_by=request.user.pk,
        )
        model_admin.message_user(
            request, gettext("The import has started; this page shows its progress.")
        )
        return HttpResponseRedirect(
            reverse("admin:contacts_contactimport_change", args=[contact_import.pk])
        )
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": gettext("Import contacts"),
        "form": form,
    }
    return TemplateResponse(request, "admin/contacts/contact/import.html", context)


def export_contacts_view(model_admin: "ContactAdmin", request):
    """Every live contact of the staff member's organization (a superuser names one with
    ?organization=ID), streamed as the API's export is."""
    if not (
        model_admin.has_view_permission(request) and model_admin.has_manager_permission(request)
    ):
        raise PermissionDenied
    if is_scoped(request):
        organization = staff_organization(request)
    else:
        # pk=None finds no row (IS NULL), which the django-stubs plugin does not allow.
        organization = Organization.objects.filter(  # type: ignore[misc]
            pk=request.GET.get("organization")
            if request.GET.get("organization", "").isdigit()
            else None
        ).first()
        if organization is None:
            model_admin.message_user(
                request,
                gettext("Choose an organization in the filter on the right first."),
                messages.WARNING,
            )
            return HttpResponseRedirect(reverse("admin:contacts_contact_changelist"))
    # Scoped, has_view_permission above admitted only a member.
    return export_response(cast(Organization, organization).pk)


@admin.register(ContactImport)
class ContactImportAdmin(OrganizationScopedAdmin):
    """Imports and their progress: read only; an import is started from the contacts list."""

    list_display = ["__str__", "status", "total", "processed", *IMPORT_COUNTS, "created_at"]
    list_filter = ["status"]
    search_fields = ["file_name"]
    ordering = ["-id"]
    fields = [
        "organization",
        "file_name",
        "status",
        "progress",
        "on_duplicate",
        "contact_group",
        "total",
        *IMPORT_COUNTS,
        "created_at",
        "started_at",
        "finished_at",
        "failed_rows",
    ]
    readonly_fields = fields  # type: ignore[assignment]  # names only, no groups

    def get_queryset(self, request):
        return super().get_queryset(request).defer("rows", "source")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_through_service(self, request, obj, form, change):
        return obj  # nothing on the page is editable

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "show_save": False}
        extra_context.update(show_save_and_continue=False, show_save_and_add_another=False)
        return super().changeform_view(request, object_id, form_url, extra_context)

    @admin.display(description=_("progress"))
    def progress(self, contact_import):
        percent = (
            round(100 * contact_import.processed / contact_import.total)
            if contact_import.total
            else 0
        )
        return format_html(
            '<progress value="{}" max="{}"></progress> {}%',
            contact_import.processed,
            contact_import.total or 1,
            percent,
        )

    @admin.display(description=_("failed rows"))
    def failed_rows(self, contact_import):
        if not contact_import.errors:
            return "-"
        return format_html_join(
            "\n",
            "<div>{}: {} {}</div>",
            (
                (error["row"], error["phone"], gettext(error["message"]))
                for error in contact_import.errors
            ),
        )
