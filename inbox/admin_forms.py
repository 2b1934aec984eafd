"""The admin inbox's forms: they read what a staff member typed; the inbox services
decide what it may change."""

import re
from typing import Any, cast

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from business_numbers.models import MessageTemplate
from business_numbers.services import placeholders
from contacts.models import Contact
from sending.models import ConversationStatus

MAX_TEXT = 4096
# What a canned reply's or a template variable's `{{placeholder}}` takes from the contact.
CONTACT_FIELDS = ("first_name", "last_name", "name", "phone", "email")


class AssignForm(forms.Form):
    assignee = forms.ModelChoiceField(
        label=_("Assignee"),
        queryset=get_user_model().objects.none(),
        required=False,
        empty_label=_("Nobody"),
    )

    def __init__(self, *args: Any, staff, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["assignee"]).queryset = staff


class LabelsForm(forms.Form):
    labels = forms.CharField(
        label=_("Labels"),
        required=False,
        max_length=1000,
        help_text=_("Separated by commas."),
    )

    def clean_labels(self) -> list[str]:
        given = [label.strip() for label in self.cleaned_data["labels"].split(",")]
        return list(dict.fromkeys(label for label in given if label))


class StatusForm(forms.Form):
    status = forms.ChoiceField(label=_("Status"), choices=ConversationStatus.choices)


class MessageForm(forms.Form):
    """A text, or a file with the text as its caption."""

    message = forms.CharField(
        label=_("Message"),
        max_length=MAX_TEXT,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": _("Write a reply…")}),
    )
    attachment = forms.FileField(label=_("Attach a file"), required=False)
    reply_to = forms.UUIDField(required=False, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("message", "").strip() and not data.get("attachment"):
            raise forms.ValidationError(_("Write a message or attach a file."))
        return data


class NoteForm(forms.Form):
    body = forms.CharField(
        label=_("Internal note"),
        max_length=MAX_TEXT,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": _("Only staff see notes.")}),
    )


def contact_values(contact: Contact) -> dict[str, str]:
    """What `{{first_name}}`, `{{name}}`... stand for, for this contact."""
    return {
        "first_name": contact.first_name or "",
        "last_name": contact.last_name or "",
        "name": contact.full_name.strip(),
        "phone": f"+{contact.phone}" if contact.phone else "",
        "email": contact.email or "",
    }


CANNED_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]+)\s*\}\}")


def with_contact(text: str, contact: Contact) -> str:
    """A canned reply's text with `{{first_name}}`, `{{name}}`... filled in from the
    contact; any other placeholder is left for the staff member to see."""
    known = contact_values(contact)
    return CANNED_PLACEHOLDER.sub(lambda match: known.get(match.group(1), match.group(0)), text)


def template_variables(template: MessageTemplate) -> list[tuple[str, str]]:
    """A template's variables as (component, placeholder): its text header's, then its
    body's."""
    header = template.component("HEADER") or {}
    body = template.component("BODY") or {}
    variables = []
    if str(header.get("format", "TEXT")).upper() == "TEXT":
        variables += [("header", name) for name in placeholders(header.get("text", ""))]
    variables += [("body", name) for name in placeholders(body.get("text", ""))]
    return variables


def sendable(template: MessageTemplate) -> bool:
    """Whether the inbox can send it: every variable is text (no media header, no
    link button whose address takes a value)."""
    header = template.component("HEADER") or {}
    if header and str(header.get("format", "TEXT")).upper() != "TEXT":
        return False
    buttons = (template.component("BUTTONS") or {}).get("buttons") or []
    return not any("{{" in str(button.get("url", "")) for button in buttons)


class TemplateForm(forms.Form):
    """A template's variables, one field each, prefilled from the contact where a
    variable is named after one of its fields."""

    template = forms.IntegerField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, template: MessageTemplate, contact: Contact, **kwargs):
        super().__init__(*args, **kwargs)
        self.message_template = template
        self.fields["template"].initial = template.pk
        known = contact_values(contact)
        for component, name in template_variables(template):
            label = f"{{{{{name}}}}}"
            if component == "header":
                label = gettext("%(variable)s in the header") % {"variable": label}
            self.fields[f"{component}_{name}"] = forms.CharField(
                label=label, max_length=1024, initial=known.get(name, "")
            )

    def sent_template(self) -> dict[str, Any]:
        """The template as the send takes it (`/api/send/template`'s shape)."""
        components = []
        for kind in ("header", "body"):
            parameters = []
            for component, name in template_variables(self.message_template):
                if component != kind:
                    continue
                parameter = {"type": "text", "text": self.cleaned_data[f"{kind}_{name}"]}
                if not name.isdigit():
                    parameter["parameter_name"] = name
                parameters.append(parameter)
            if parameters:
                components.append({"type": kind, "parameters": parameters})
        return {
            "name": self.message_template.name,
            "language": {"code": self.message_template.language},
            "components": components,
        }
