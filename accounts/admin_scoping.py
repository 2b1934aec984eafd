"""Tenancy for the Django admin, in one place.

Every ModelAdmin of an organization's records inherits OrganizationScopedAdmin. For a
staff member (not a superuser) it narrows every queryset the admin builds to the
member's organization: lists, search, filters, change and delete pages, history,
bulk actions, autocomplete and raw-id pop-ups (which are changelists), and the
choices of related fields. A record of another organization is a 404, exactly like
a missing one. New records get the member's organization; the field is not shown.

Superusers are not scoped: they see every organization's records, with an
organization column and filter. A staff user without a membership sees nothing.

Roles are enforced here too (docs/inbox.md, "Roles"): each ModelAdmin declares what an
agent may do on it (`agent_access`: nothing, the default, so that a new page is closed
to agents until it says otherwise; view and use; or everything). An agent asking for a
page beyond that gets a 403, whatever links the page shows. Managers and superusers
may do everything staff can. The one page of another app's model, the background tasks
(accounts/admin.py), asks the same question (`role_allows`).

Soft-deleted records (those with `deleted_at` set) are left out for everyone, and
deleting from the admin is the service's soft delete (subclasses say how). A record
deleted by someone else while its page was open is neither saved back nor deleted
again: the services find it gone (Http404), and the admin says so on the list page.
"""

import contextlib
from typing import cast

from django.contrib import admin
from django.db import models, transaction
from django.http import Http404
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from accounts.models import Membership, Organization
from accounts.roles import is_agent, remember_role
from messaging_project.core.service_admin import RecordDeleted, ServiceAdmin

_UNSET = object()


def staff_organization(request) -> Organization | None:
    """The organization of the staff member making the request, read once per request.

    None for superusers (they are not scoped) and for staff without a membership.
    """
    cached = getattr(request, "_staff_organization", _UNSET)
    if cached is not _UNSET:
        return cast(Organization | None, cached)  # what this function stored below
    organization = None
    user = request.user
    if user.is_active and user.is_staff and not user.is_superuser:
        membership = (
            Membership.objects.select_related("organization").filter(user_id=user.pk).first()
        )
        organization = membership.organization if membership else None
        remember_role(user, membership.role if membership else None)  # no second look-up
    request._staff_organization = organization
    return organization


def is_scoped(request) -> bool:
    return not request.user.is_superuser


def has_organization(model) -> bool:
    return any(field.name == "organization" for field in model._meta.get_fields())


def has_soft_delete(model) -> bool:
    return any(field.name == "deleted_at" for field in model._meta.get_fields())


def scoped_queryset(queryset: models.QuerySet, request) -> models.QuerySet:
    """Live records, and for staff only their organization's (nothing without one)."""
    if has_soft_delete(queryset.model):
        queryset = queryset.filter(deleted_at__isnull=True)
    if not is_scoped(request):
        return queryset
    organization = staff_organization(request)
    if organization is None:
        return queryset.none()
    if queryset.model is Organization:
        return queryset.filter(pk=organization.pk)
    return queryset.filter(organization=organization)


class OrganizationRelatedFilter(admin.RelatedFieldListFilter):
    """A list filter on a related record (a contact's group) offering only the
    records the user may see, instead of every organization's."""

    def field_choices(self, field, request, model_admin):
        related = scoped_queryset(field.related_model._default_manager.all(), request)
        return [(record.pk, str(record)) for record in related]


class AgentAccess:
    """What an agent may do on an admin page: nothing (403), view and use (not add,
    change or delete), or everything a manager may."""

    NONE = "none"
    VIEW = "view"
    ALL = "all"


def role_allows(request, agent_access: str, *, writes: bool) -> bool:
    """Whether the user may open a page whose agents may do `agent_access` (AgentAccess):
    superusers and managers may do everything, staff without an organization nothing."""
    if is_scoped(request) and staff_organization(request) is None:
        return False
    if not is_agent(request.user):
        return True
    return agent_access == AgentAccess.ALL or (agent_access == AgentAccess.VIEW and not writes)


class OrganizationScopedAdmin(ServiceAdmin):
    """The base of every ModelAdmin whose model has an `organization`."""

    # One count query per list page instead of two.
    show_full_result_count = False
    # What an agent may do here (AgentAccess); managers and superusers may do everything.
    agent_access = AgentAccess.NONE

    # Scoping

    def get_queryset(self, request):
        return scoped_queryset(super().get_queryset(request), request)

    def get_object(self, request, object_id, from_field=None):
        # The admin would redirect to its index with "doesn't exist"; a 404 is what the
        # API answers too, for a missing record and another organization's alike.
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such record.")
        return obj

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        related = db_field.related_model
        if related is Organization:
            kwargs["queryset"] = scoped_queryset(related._default_manager.all(), request)
        elif has_organization(related):
            queryset = scoped_queryset(related._default_manager.all(), request)
            if not is_scoped(request):
                queryset = queryset.select_related("organization")
            kwargs["queryset"] = queryset
        formfield = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if formfield is not None and has_organization(related) and not is_scoped(request):
            # Superusers choose among every organization's records: say whose each is.
            formfield.label_from_instance = lambda record: f"{record} ({record.organization})"
        return formfield

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        related = db_field.related_model
        if has_organization(related) or related is Organization:
            kwargs["queryset"] = scoped_queryset(related._default_manager.all(), request)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    # Staff without an organization may do nothing at all; agents what `agent_access` says.

    def _allowed(self, request, *, writes: bool) -> bool:
        return role_allows(request, self.agent_access, writes=writes)

    def has_manager_permission(self, request) -> bool:
        """For a page's own views that only managers may open, whatever `agent_access`
        says of its records (the contacts' import and export, syncing templates)."""
        return role_allows(request, AgentAccess.NONE, writes=False)

    def has_module_permission(self, request):
        return self._allowed(request, writes=False) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return self._allowed(request, writes=False) and super().has_view_permission(request, obj)

    def has_add_permission(self, request):
        return self._allowed(request, writes=True) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        return self._allowed(request, writes=True) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._allowed(request, writes=True) and super().has_delete_permission(request, obj)

    # The organization: hidden from staff, a filter and a column for superusers.

    def get_exclude(self, request, obj=None):
        exclude = list(super().get_exclude(request, obj) or [])
        if is_scoped(request):
            exclude.append("organization")
        return exclude

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if not is_scoped(request):
            return fieldsets
        return [
            (name, {**options, "fields": [f for f in options["fields"] if f != "organization"]})
            for name, options in fieldsets
        ]

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is not None and not is_scoped(request):
            readonly.append("organization")
        return readonly

    def get_list_display(self, request):
        columns = list(super().get_list_display(request))
        if not is_scoped(request):
            columns.append("organization")
        return columns

    def get_list_filter(self, request):
        filters = list(super().get_list_filter(request))
        if not is_scoped(request):
            filters.insert(0, "organization")
        return filters

    def get_list_select_related(self, request):
        related = super().get_list_select_related(request)
        related = list(related) if isinstance(related, list | tuple) else []
        if not is_scoped(request):
            related.append("organization")
        return related or False

    def organization_for_new_record(self, request, form) -> Organization:
        """A staff member's own organization; a superuser's choice in the form."""
        if is_scoped(request):
            # The permissions admit only a member: the organization is there.
            return cast(Organization, staff_organization(request))
        return form.cleaned_data["organization"]

    # Deleting is the service's soft delete, one record at a time.

    def delete_model(self, request, obj):
        try:
            self.soft_delete(request, obj)
        except Http404:
            raise RecordDeleted(obj) from None

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            for obj in queryset:
                # One deleted meanwhile is already what was asked for.
                with contextlib.suppress(Http404):
                    self.soft_delete(request, obj)

    def soft_delete(self, request, obj):
        raise NotImplementedError

    def get_deleted_objects(self, objs, request):
        """Only the records themselves: a soft delete takes nothing else with it,
        so the confirmation page lists no related records (nor anyone else's)."""
        objs = list(objs)
        opts = self.model._meta
        listed = []
        for obj in objs:
            try:
                url = reverse(
                    f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_change",
                    args=[obj.pk],
                )
                listed.append(format_html('{}: <a href="{}">{}</a>', opts.verbose_name, url, obj))
            except NoReverseMatch:
                listed.append(format_html("{}: {}", opts.verbose_name, obj))
        perms_needed = set()
        if not all(self.has_delete_permission(request, obj) for obj in objs):
            perms_needed.add(opts.verbose_name)
        return listed, {opts.verbose_name_plural: len(objs)}, perms_needed, []
