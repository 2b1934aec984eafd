"""The admin site's name, and organizations, API tokens, staff members and the
background tasks in the admin.

Organizations and every membership are for superusers only; a manager has the staff
page of their own organization (`StaffMember`), where they add staff and set roles.
API tokens are scoped like every organization record; they are issued and revoked
through accounts.services, and neither their digest nor their plaintext is ever shown
in a list or a form. The background tasks are the worker's page, opened here to
managers for their organization's tasks (`OrganizationTaskAdmin`).
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model, password_validation
from django.http import Http404
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django_tasks_db.models import DBTaskResult

from accounts import services
from accounts.admin_scoping import (
    AgentAccess,
    OrganizationScopedAdmin,
    is_scoped,
    role_allows,
    staff_organization,
)
from accounts.models import ApiToken, Membership, Organization, Role, StaffMember
from messaging_project.core.service_admin import ServiceAdmin, adopt
from messaging_project.worker.admin import TaskAdmin

admin.site.site_header = "WhatsApp Business Messaging"
admin.site.site_title = "WhatsApp Business Messaging"
admin.site.index_title = _("Administration")
# No "View site" link: the service has no public site besides the admin (docs/admin.md).
admin.site.site_url = None


class SuperuserOnlyAdmin(ServiceAdmin):
    """Tenants and their members are managed by superusers, never by a tenant's staff."""

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def has_add_permission(self, request):
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None):
        return self.has_module_permission(request)


@admin.register(Organization)
class OrganizationAdmin(SuperuserOnlyAdmin):
    """The organization's own fields. Apps above accounts extend this page: sending
    registers a subclass with the WhatsApp channel inline (sending/admin.py)."""

    fieldsets = [(None, {"fields": ["name", "uuid", "rate_limit", "created_at"]})]
    readonly_fields = ["uuid", "created_at"]
    list_display = ["name", "uuid", "rate_limit", "created_at"]
    search_fields = ["name", "uuid"]

    def has_delete_permission(self, request, obj=None):
        # Deleting a tenant would hard-delete all its records; not a click in the admin.
        return False

    def save_through_service(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            obj.save()
        else:
            created = services.create_organization(
                name=data["name"], rate_limit=data.get("rate_limit")
            )
            adopt(obj, created)


class TokenStatusFilter(admin.SimpleListFilter):
    title = _("status")
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("active", _("active")), ("revoked", _("revoked"))]

    def queryset(self, request, queryset):
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(ApiToken)
class ApiTokenAdmin(OrganizationScopedAdmin):
    """Issued here, shown once in a message; revoked with an action, never deleted."""

    list_display = ["prefix", "name", "is_active", "created_at", "last_used_at"]
    list_filter = [TokenStatusFilter]
    search_fields = ["prefix", "name"]
    actions = ["revoke_tokens"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    ordering = ["-id"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["organization", "name"]
        return ["organization", "name", "prefix", "created_at", "last_used_at", "revoked_at"]

    @admin.display(description=_("active"), boolean=True)
    def is_active(self, token):
        return token.is_active

    def has_delete_permission(self, request, obj=None):
        return False

    def save_through_service(self, request, obj, form, change):
        if change:
            obj.save(update_fields=["name"])
            return
        issued = services.issue_token(
            organization=self.organization_for_new_record(request, form),
            name=form.cleaned_data.get("name", ""),
        )
        adopt(obj, issued.record)
        self.message_user(
            request,
            gettext(
                "Copy the new token now; it is not stored and will not be shown again: %(token)s"
            )
            % {"token": issued.token},
            messages.WARNING,
        )

    @admin.action(description=_("Revoke the selected tokens"), permissions=["change"])
    def revoke_tokens(self, request, queryset):
        tokens = [token for token in queryset if token.is_active]
        for token in tokens:
            services.revoke_token(token=token)
        message = ngettext("Revoked %(count)d token.", "Revoked %(count)d tokens.", len(tokens))
        self.message_user(request, message % {"count": len(tokens)}, messages.SUCCESS)


class StaffMemberForm(forms.ModelForm):
    """A new staff member, created with accounts.services.create_staff_user."""

    username = forms.CharField(label=_("Username"), max_length=150)
    password1 = forms.CharField(label=_("Password"), widget=forms.PasswordInput, strip=False)
    password2 = forms.CharField(label=_("Password again"), widget=forms.PasswordInput, strip=False)
    role = forms.ChoiceField(
        label=_("role"), choices=Role.choices, initial=Role.MANAGER, required=False
    )

    class Meta:
        model = Membership
        fields = ["organization"]

    def clean(self):
        data = super().clean()
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", gettext("The two passwords differ."))
        elif data.get("password1"):
            # As the service checks it, with the user's attributes (the similarity check).
            user = get_user_model()(username=data.get("username", ""))
            try:
                password_validation.validate_password(data["password1"], user)
            except forms.ValidationError as error:
                self.add_error("password1", error)
        return data


@admin.register(Membership)
class MembershipAdmin(SuperuserOnlyAdmin):
    """Which organization each staff user manages. Adding one creates the staff user."""

    list_display = ["user", "organization", "role", "user_is_active", "last_login"]
    list_filter = ["organization", "role"]
    list_select_related = ["user", "organization"]
    search_fields = ["user__username", "organization__name"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = StaffMemberForm
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["username", "password1", "password2", "organization", "role"]
        return ["user", "organization", "role"]

    def get_readonly_fields(self, request, obj=None):
        return ["user"] if obj else []

    def has_delete_permission(self, request, obj=None):
        # Removing a membership leaves the user; they then see nothing.
        return self.has_module_permission(request)

    @admin.display(description=_("active"), boolean=True)
    def user_is_active(self, membership):
        return membership.user.is_active

    @admin.display(description=_("last login"))
    def last_login(self, membership):
        return membership.user.last_login

    def save_through_service(self, request, obj, form, change):
        if change:
            obj.save()
            return
        user = services.create_staff_user(
            username=form.cleaned_data["username"],
            organization=form.cleaned_data["organization"],
            password=form.cleaned_data["password1"],
            role=form.cleaned_data.get("role") or Role.MANAGER,
        )
        adopt(obj, user.membership)


class NewStaffMemberForm(StaffMemberForm):
    class Meta:
        model = StaffMember
        fields = ["role"]


@admin.register(StaffMember)
class StaffMemberAdmin(OrganizationScopedAdmin):
    """A manager's page of their organization's staff: adding a member (created with
    accounts.services.create_staff_user) and setting roles. Managers only (agents get a
    403, as on every page agent_access does not open); superusers use the memberships'
    page. A manager cannot change their own role: the organization keeps a manager."""

    list_display = ["user", "role", "user_is_active", "last_login"]
    list_filter = ["role"]
    list_select_related = ["user"]
    search_fields = ["user__username"]
    ordering = ["user__username"]

    def _manager_of_an_organization(self, request) -> bool:
        return is_scoped(request) and self.has_manager_permission(request)

    # Roles, not Django's model permissions, decide here: staff created before this page
    # have none for it.
    def has_module_permission(self, request):
        return self._manager_of_an_organization(request)

    def has_view_permission(self, request, obj=None):
        return self._manager_of_an_organization(request)

    def has_add_permission(self, request):
        return self._manager_of_an_organization(request)

    def has_change_permission(self, request, obj=None):
        return self._manager_of_an_organization(request)

    def has_delete_permission(self, request, obj=None):
        return False

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = NewStaffMemberForm
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["username", "password1", "password2", "role"]
        return ["user", "role"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["user", "role"] if obj.user_id == request.user.pk else ["user"]

    @admin.display(description=_("active"), boolean=True)
    def user_is_active(self, membership):
        return membership.user.is_active

    @admin.display(description=_("last login"))
    def last_login(self, membership):
        return membership.user.last_login

    def save_through_service(self, request, obj, form, change):
        if change:
            if "role" in form.changed_data:
                services.set_staff_role(membership=obj, role=form.cleaned_data["role"])
            return
        user = services.create_staff_user(
            username=form.cleaned_data["username"],
            organization=staff_organization(request),
            password=form.cleaned_data["password1"],
            role=form.cleaned_data.get("role") or Role.MANAGER,
        )
        adopt(obj, user.membership)


# Scoped here, not in the worker: the worker imports no app, so it knows no staff or roles.
admin.site.unregister(DBTaskResult)


@admin.register(DBTaskResult)
class OrganizationTaskAdmin(TaskAdmin):
    """The background tasks: every task for superusers; for a manager, the tasks enqueued
    for their organization (those with its TaskOrganization). Tasks for no organization
    (the clean-ups) may name any organization's records: superusers' alone. Closed to
    agents, like every operator's page."""

    def get_queryset(self, request):
        tasks = super().get_queryset(request)
        if not is_scoped(request):
            return tasks
        organization = staff_organization(request)
        if organization is None:
            return tasks.none()
        return tasks.filter(organization__organization_id=organization.pk)

    def get_object(self, request, object_id, from_field=None):
        # As on every organization's page: another organization's task is a 404.
        task = super().get_object(request, object_id, from_field)
        if task is None:
            raise Http404("No such task.")
        return task

    def has_module_permission(self, request) -> bool:
        return role_allows(request, AgentAccess.NONE, writes=False)

    def has_view_permission(self, request, obj=None) -> bool:
        return role_allows(request, AgentAccess.NONE, writes=False)
