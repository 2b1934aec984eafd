"""Admin pages that save through the apps' services, as the API does.

A ModelAdmin's own save would bypass the rules a service enforces (uniqueness among
live records, counters, side effects). ServiceAdmin routes every save through
`save_through_service`, and shows a service's refusal on the form like any other
validation error; a record deleted by someone else while its page was open is
neither saved back nor deleted again (the service answers Http404) and the admin says
so on the list page. Tenancy (which records a staff member sees) is accounts'
business: accounts.admin_scoping.OrganizationScopedAdmin builds on this class.

Services speak English, the API's language; the messages they raise are marked with
gettext_noop, and the admin looks each one up in the staff member's language when it
shows it (`translated`).
"""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import models
from django.http import Http404, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext


def adopt(obj: models.Model, saved: models.Model) -> None:
    """Make the admin's unsaved instance the record a service created, so that the
    admin's log entry, message and redirect point at it."""
    for field in saved._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False
    obj._state.db = saved._state.db


def translated(error: ValidationError) -> ValidationError:
    """A service's refusal in the active language: each message looked up in the catalog
    (a message not in it, or one already translated, is shown as it is), its parameters
    applied afterwards."""

    def one(item: ValidationError) -> ValidationError:
        return ValidationError(gettext(str(item.message)), code=item.code, params=item.params)

    if hasattr(error, "error_dict"):
        return ValidationError(
            {field: [one(item) for item in items] for field, items in error.error_dict.items()}
        )
    return ValidationError([one(item) for item in error.error_list])


class ServiceErrorsForm:
    """Mixed into admin forms: errors a service raised on save, shown on the form.

    The admin validates the form before it saves, but uniqueness is the service's
    rule. When the service refuses, OrganizationScopedAdmin renders the form again
    with the service's errors set here.
    """

    service_error: ValidationError | None = None

    def _post_clean(self):
        super()._post_clean()
        if self.service_error is None:
            return
        error = translated(self.service_error)
        if hasattr(error, "error_dict"):
            for field, errors in error.error_dict.items():
                self.add_error(field if field in self.fields else None, errors)
        else:
            self.add_error(None, error)


class ServiceRefused(Exception):
    def __init__(self, error: ValidationError):
        super().__init__(error)
        self.error = error


class RecordDeleted(Exception):
    """A service found the record being saved or deleted already deleted (its Http404)."""

    def __init__(self, record: models.Model):
        super().__init__(record)
        self.record = record


class ServiceAdmin(admin.ModelAdmin):
    """A ModelAdmin whose saves go through the app's services, as the API's do."""

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        error = getattr(request, "_service_error", None)
        if error is not None:
            form = type(form)(form.__name__, (ServiceErrorsForm, form), {"service_error": error})
        return form

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ServiceRefused as refused:
            # The save was rolled back with the view's transaction; show the form again,
            # this time carrying the service's errors.
            request._service_error = refused.error
            return super().changeform_view(request, object_id, form_url, extra_context)
        except RecordDeleted:
            # Its form shows the values typed, not the record's: named by its id.
            return self.back_to_the_list(
                request,
                gettext(
                    "The %(name)s with ID “%(key)s” was deleted meanwhile; "
                    "your changes were not saved."
                )
                % {"name": self.opts.verbose_name, "key": object_id},
            )

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except RecordDeleted as gone:
            return self.back_to_the_list(
                request,
                gettext("The %(name)s “%(record)s” had already been deleted.")
                % {"name": self.opts.verbose_name, "record": gone.record},
            )

    def back_to_the_list(self, request, message: str) -> HttpResponseRedirect:
        self.message_user(request, message, messages.ERROR)
        opts = self.opts
        return HttpResponseRedirect(
            reverse(
                f"admin:{opts.app_label}_{opts.model_name}_changelist",
                current_app=self.admin_site.name,
            )
        )

    def save_model(self, request, obj, form, change):
        try:
            self.save_through_service(request, obj, form, change)
        except ValidationError as error:
            raise ServiceRefused(error) from None
        except Http404:
            raise RecordDeleted(obj) from None

    def save_through_service(self, request, obj, form, change):
        """Create or update the record with the app's service. Subclasses implement it,
        and must leave `obj` as the saved record (the admin links to it afterwards)."""
        raise NotImplementedError
