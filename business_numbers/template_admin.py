"""Writing a template in the admin: a form of plain fields (header, body and its
examples, footer, buttons) turned into WhatsApp's components, a preview drawn as the
staff member types (core/whatsapp_preview.js), and the same service as POST
/api/templates: WhatsApp's rules first, then the template submitted (docs/templates.md).
Managers and superusers write and delete templates; agents send them."""

from typing import Any, cast

from django import forms
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin_scoping import is_scoped, staff_organization
from accounts.roles import is_manager
from business_numbers import services
from business_numbers.gateway import ChannelNotConfigured, GatewayError
from business_numbers.models import Number
from business_numbers.services.template_writing import CATEGORIES
from messaging_project.core.service_admin import translated

# Where each component's errors are shown, by its place in the components built below.
ERROR_FIELDS = {
    "HEADER": {"text": "header", "example.header_text": "header_example"},
    "BODY": {"text": "body", "example.body_text": "body_examples"},
    "FOOTER": {"text": "footer"},
    "BUTTONS": {"buttons": "quick_replies"},
}


def lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class TemplateWriteForm(forms.Form):
    number = forms.ModelChoiceField(label=_("Number"), queryset=Number.objects.none())
    name = forms.CharField(
        label=_("Name"),
        max_length=512,
        help_text=_("Lowercase letters, digits and underscores, such as order_ready."),
    )
    language = forms.CharField(label=_("Language"), max_length=16, initial="en_US")
    category = forms.ChoiceField(
        label=_("Category"), choices=[(category, category) for category in CATEGORIES]
    )
    header = forms.CharField(
        label=_("Header"),
        required=False,
        max_length=60,
        help_text=_("Optional text, at most 60 characters and one variable {{1}}."),
    )
    header_example = forms.CharField(label=_("Header example"), required=False, max_length=60)
    body = forms.CharField(
        label=_("Body"),
        max_length=1024,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=_("At most 1,024 characters; variables {{1}}, {{2}}... in order."),
    )
    body_examples = forms.CharField(
        label=_("Body examples"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("One example per line for each variable, in order."),
    )
    footer = forms.CharField(label=_("Footer"), required=False, max_length=60)
    quick_replies = forms.CharField(
        label=_("Quick-reply buttons"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("One button text per line, at most 25 characters each."),
    )
    url_button_text = forms.CharField(label=_("Link button text"), required=False, max_length=25)
    url_button_url = forms.URLField(
        label=_("Link button URL"), required=False, max_length=2000, assume_scheme="https"
    )

    def components(self) -> list[dict[str, Any]]:
        data = self.cleaned_data
        components: list[dict[str, Any]] = []
        if data["header"]:
            header: dict[str, Any] = {"type": "HEADER", "format": "TEXT", "text": data["header"]}
            if data["header_example"]:
                header["example"] = {"header_text": [data["header_example"]]}
            components.append(header)
        body: dict[str, Any] = {"type": "BODY", "text": data["body"]}
        if lines(data["body_examples"]):
            body["example"] = {"body_text": [lines(data["body_examples"])]}
        components.append(body)
        if data["footer"]:
            components.append({"type": "FOOTER", "text": data["footer"]})
        buttons = [{"type": "QUICK_REPLY", "text": text} for text in lines(data["quick_replies"])]
        if data["url_button_text"] or data["url_button_url"]:
            buttons.append(
                {"type": "URL", "text": data["url_button_text"], "url": data["url_button_url"]}
            )
        if buttons:
            components.append({"type": "BUTTONS", "buttons": buttons})
        return components

    def show_refusal(self, error: ValidationError, components: list[dict[str, Any]]) -> None:
        """The service's errors on the fields they are about."""
        for path, messages in translated(error).message_dict.items():
            field = path if path in self.fields else None
            parts = path.split(".")
            if parts[0] == "components" and len(parts) > 2 and parts[1].isdigit():
                kind = str(components[int(parts[1])].get("type"))
                rest = ".".join(parts[2:])
                places = ERROR_FIELDS.get(kind, {})
                field = places.get(rest) or next(
                    (name for key, name in places.items() if rest.startswith(key)), None
                )
                if kind == "BUTTONS" and ".url" in rest:
                    field = "url_button_url"
            for message in messages:
                self.add_error(field, message)


def write_template_view(model_admin, request):
    """GET: the form; POST: the template written through the service, then its page."""
    if not (model_admin.has_view_permission(request) and is_manager(request.user)):
        raise PermissionDenied
    organization = staff_organization(request)
    form = TemplateWriteForm(request.POST or None)
    numbers = Number.objects.live()
    if is_scoped(request):
        numbers = numbers.filter(organization=organization)
    cast(forms.ModelChoiceField, form.fields["number"]).queryset = numbers
    if request.method == "POST" and form.is_valid():
        components = form.components()
        try:
            template = services.create_template(
                number=form.cleaned_data["number"],
                name=form.cleaned_data["name"],
                language=form.cleaned_data["language"],
                category=form.cleaned_data["category"],
                components=components,
            )
        except ValidationError as error:
            form.show_refusal(error, components)
        except ChannelNotConfigured as error:
            form.add_error(None, error.detail)
        except GatewayError as error:
            form.add_error(None, gettext("WhatsApp refused the template: %s") % error.message)
        else:
            model_admin.message_user(
                request,
                gettext("The template %(name)s was submitted to WhatsApp: %(status)s.")
                % {"name": template.name, "status": template.status},
            )
            return HttpResponseRedirect(
                reverse("admin:business_numbers_messagetemplate_change", args=[template.pk])
            )
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": gettext("Write a template"),
        "form": form,
    }
    return TemplateResponse(request, "admin/business_numbers/messagetemplate/write.html", context)
