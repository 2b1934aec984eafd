"""Templates written here: WhatsApp's rules checked first, then the template submitted to
the number's business account (the sandbox approves it at once), kept with WhatsApp's
id and status, edited and deleted there and here. Its status then moves with
WhatsApp's message_template_status_update webhooks (inbound/services/account_news.py).

Every write calls WhatsApp before it touches the database, outside any transaction: a
refusal changes nothing here, and a slow WhatsApp holds no lock. See docs/templates.md.

The rules' messages are marked with gettext_noop, their numbers params (as the
interactive rules': messaging_project/core/interactive.py): English in the API, the
staff member's language in the admin.
"""

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from business_numbers.gateway import gateway_for
from business_numbers.models import MessageTemplate, Number
from messaging_project.core.interactive import (
    REQUIRED_TEXT,
    TOO_LONG,
    WEB_URL,
    Errors,
    one_of,
    problem,
)

NAME = re.compile(r"^[a-z0-9_]+$")
NAME_MAX = 512
LANGUAGE = re.compile(r"^[a-z]{2,3}(_[A-Z]{2})?$")
CATEGORIES = ("MARKETING", "UTILITY", "AUTHENTICATION")
COMPONENT_TYPES = ("HEADER", "BODY", "FOOTER", "BUTTONS")
HEADER_FORMATS = ("TEXT", "IMAGE", "VIDEO", "DOCUMENT", "LOCATION")
BODY_MAX = 1024
HEADER_MAX = FOOTER_MAX = 60
BUTTONS_MAX = 10
BUTTON_TEXT_MAX = 25
PHONE_NUMBER_MAX = 20
URL_MAX = 2000
BUTTON_TYPES = (
    "QUICK_REPLY",
    "URL",
    "PHONE_NUMBER",
    "COPY_CODE",
    "OTP",
    "FLOW",
    "CATALOG",
    "MPM",
    "VOICE_CALL",
)
# Any `{{...}}`, to tell a positional variable from one WhatsApp would refuse.
VARIABLE = re.compile(r"\{\{(.*?)\}\}")


class TemplateExists(ValidationError):
    """The number has a live template of that name and language already."""


def template_errors(
    *, name: str, language: str, category: str, components: Any, check_name: bool = True
) -> Errors:
    """WhatsApp's rules for a template, by field (`components.1.text`); {} when good."""
    errors: Errors = {}
    if check_name:
        if not (isinstance(name, str) and NAME.match(name) and len(name) <= NAME_MAX):
            errors["name"] = [
                problem(
                    gettext_noop(
                        "Lowercase letters, digits and underscores, at most %(maximum)s characters."
                    ),
                    maximum=NAME_MAX,
                )
            ]
        if not (isinstance(language, str) and LANGUAGE.match(language)):
            errors["language"] = [problem(gettext_noop("A language code such as en or en_US."))]
    if category not in CATEGORIES:
        errors["category"] = [one_of(CATEGORIES)]
    if not isinstance(components, list) or not components:
        errors["components"] = [
            problem(gettext_noop("Give the template's components, a list with its BODY."))
        ]
        return errors
    seen: set[str] = set()
    for index, component in enumerate(components):
        path = f"components.{index}"
        if not isinstance(component, dict):
            errors[path] = [problem(gettext_noop("A component must be an object with its type."))]
            continue
        kind = str(component.get("type", "")).upper()
        if kind not in COMPONENT_TYPES:
            errors[f"{path}.type"] = [one_of(COMPONENT_TYPES)]
            continue
        if kind in seen:
            errors[f"{path}.type"] = [
                problem(gettext_noop("A template has one %(kind)s at most."), kind=kind)
            ]
            continue
        seen.add(kind)
        COMPONENT_CHECKS[kind](errors, path, component, category)
    if "BODY" not in seen and "components" not in errors:
        errors["components"] = [problem(gettext_noop("A template needs its BODY component."))]
    return errors


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def variables_of(text: str) -> list[str]:
    return [match.strip() for match in VARIABLE.findall(text)]


def check_variables(
    errors: Errors, text_path: str, text: str, examples: Any, example_path: str, *, most: int | None
) -> None:
    """`{{1}}`..`{{n}}` in order of first appearance, each with its example."""
    found = variables_of(text)
    if any(not variable.isdigit() for variable in found):
        errors[text_path] = [problem(gettext_noop("Variables are numbered: {{1}}, {{2}}, ..."))]
        return
    order = list(dict.fromkeys(int(variable) for variable in found))
    if order != list(range(1, len(order) + 1)):
        errors[text_path] = [
            problem(gettext_noop("Variables go in order, from {{1}}: {{1}}, {{2}}, ..."))
        ]
        return
    if most is not None and len(order) > most:
        errors[text_path] = [problem(gettext_noop("At most %(most)s variable here."), most=most)]
        return
    if order and not (
        isinstance(examples, list)
        and len(examples) == len(order)
        and all(isinstance(value, str) and value.strip() for value in examples)
    ):
        errors[example_path] = [
            problem(
                gettext_noop("Give one example for each variable: %(count)s text(s)."),
                count=len(order),
            )
        ]


def check_text(errors: Errors, path: str, text: Any, maximum: int) -> bool:
    if not isinstance(text, str) or not text.strip():
        errors[path] = [problem(REQUIRED_TEXT, maximum=maximum)]
        return False
    if len(text) > maximum:
        errors[path] = [problem(TOO_LONG, maximum=maximum, length=len(text))]
        return False
    return True


def check_header(errors: Errors, path: str, component: dict, category: str) -> None:
    header_format = str(component.get("format", "")).upper()
    if header_format not in HEADER_FORMATS:
        errors[f"{path}.format"] = [one_of(HEADER_FORMATS)]
        return
    example = as_dict(component.get("example"))
    if header_format == "TEXT":
        if check_text(errors, f"{path}.text", component.get("text"), HEADER_MAX):
            check_variables(
                errors,
                f"{path}.text",
                component["text"],
                example.get("header_text"),
                f"{path}.example.header_text",
                most=1,
            )
    elif header_format != "LOCATION" and not example.get("header_handle"):
        errors[f"{path}.example.header_handle"] = [
            problem(
                gettext_noop("A media header needs an example: the handle of an uploaded sample.")
            )
        ]


def check_body(errors: Errors, path: str, component: dict, category: str) -> None:
    if category == "AUTHENTICATION" and "text" not in component:
        return  # WhatsApp writes an authentication template's text itself
    if not check_text(errors, f"{path}.text", component.get("text"), BODY_MAX):
        return
    example = as_dict(component.get("example"))
    body_text = example.get("body_text")
    # WhatsApp's shape: one list of examples inside a list.
    examples = body_text[0] if isinstance(body_text, list) and body_text else body_text
    check_variables(
        errors, f"{path}.text", component["text"], examples, f"{path}.example.body_text", most=None
    )


def check_footer(errors: Errors, path: str, component: dict, category: str) -> None:
    if check_text(errors, f"{path}.text", component.get("text"), FOOTER_MAX) and variables_of(
        component["text"]
    ):
        errors[f"{path}.text"] = [problem(gettext_noop("A footer has no variables."))]


def check_buttons(errors: Errors, path: str, component: dict, category: str) -> None:
    buttons = component.get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= BUTTONS_MAX:
        errors[f"{path}.buttons"] = [
            problem(gettext_noop("Give 1 to %(maximum)s buttons."), maximum=BUTTONS_MAX)
        ]
        return
    for index, button in enumerate(buttons):
        button_path = f"{path}.buttons.{index}"
        if not isinstance(button, dict):
            errors[button_path] = [
                problem(gettext_noop("A button must be an object with its type."))
            ]
            continue
        kind = str(button.get("type", "")).upper()
        if kind not in BUTTON_TYPES:
            errors[f"{button_path}.type"] = [one_of(BUTTON_TYPES)]
            continue
        if kind != "OTP" or "text" in button:
            check_text(errors, f"{button_path}.text", button.get("text"), BUTTON_TEXT_MAX)
        if kind == "URL":
            url = button.get("url")
            if not (isinstance(url, str) and is_web_url(url)):
                errors[f"{button_path}.url"] = [problem(WEB_URL)]
            else:
                examples = button.get("example")
                examples = examples if isinstance(examples, list) else [examples]
                check_variables(
                    errors, f"{button_path}.url", url, examples, f"{button_path}.example", most=1
                )
        elif kind == "PHONE_NUMBER":
            check_text(
                errors, f"{button_path}.phone_number", button.get("phone_number"), PHONE_NUMBER_MAX
            )


COMPONENT_CHECKS = {
    "HEADER": check_header,
    "BODY": check_body,
    "FOOTER": check_footer,
    "BUTTONS": check_buttons,
}


def is_web_url(url: str) -> bool:
    return url.startswith(("https://", "http://")) and len(url) <= URL_MAX


def checked(errors: Errors) -> None:
    if errors:
        raise ValidationError(errors)


def create_template(
    *, number: Number, name: str, language: str, category: str, components: list[dict[str, Any]]
) -> MessageTemplate:
    """Check, submit to WhatsApp, then keep the template with WhatsApp's id and status. A
    live template of that name and language on the number is a ValidationError on
    `name`; WhatsApp's refusal a GatewayError, and nothing is kept."""
    category = category.upper()
    checked(template_errors(name=name, language=language, category=category, components=components))
    live = MessageTemplate.objects.live().filter(number=number, name=name, language=language)
    if live.exists():
        exists = gettext_noop("The number has a template %(name)s in %(language)s already.")
        raise TemplateExists({"name": [problem(exists, name=name, language=language)]})
    gateway = gateway_for(number)  # ChannelNotConfigured before anything is sent
    answer = gateway.create_template(
        {"name": name, "language": language, "category": category, "components": components}
    )
    values = {
        "organization_id": number.organization_id,
        "category": answer.get("category") or category,
        "status": answer.get("status") or "PENDING",
        "reason": "",
        "components": components,
        "external_id": answer["id"],
        "news_times": {},  # a template written again starts its news afresh
        "deleted_at": None,
    }
    with transaction.atomic():
        # A template deleted here earlier comes back as this one (one row per name and
        # language on a number, deleted or not).
        template, _ = MessageTemplate.objects.update_or_create(
            number=number, name=name, language=language, defaults=values
        )
    return template


def update_template(
    *,
    template: MessageTemplate,
    components: list[dict[str, Any]] | None = None,
    category: str | None = None,
) -> MessageTemplate:
    """Change a template's components and/or category at WhatsApp, then here. WhatsApp
    reviews an edit as it reviews a new template: the status becomes what it reports
    next (PENDING until then; the sandbox approves at once)."""
    category = (category or template.category).upper()
    new_components = components if components is not None else template.components
    checked(
        template_errors(
            name=template.name,
            language=template.language,
            category=category,
            components=new_components,
            check_name=False,
        )
    )
    changes: dict[str, Any] = {}
    if components is not None:
        changes["components"] = components
    if category != template.category.upper():
        changes["category"] = category
    if not changes:
        return template
    if not template.external_id:
        unknown = gettext_noop("WhatsApp's id of this template is not known: sync the templates.")
        raise ValidationError({"template": [unknown]})
    reviewed = gateway_for(template.number).edit_template(template.external_id, changes)
    updated = (
        MessageTemplate.objects.live()
        .filter(pk=template.pk)
        .update(
            components=new_components,
            category=category,
            status=reviewed,
            reason="",
            updated_at=timezone.now(),
        )
    )
    if not updated:  # deleted meanwhile
        raise MessageTemplate.DoesNotExist(f"template {template.pk}")
    template.refresh_from_db()
    return template


def delete_template(*, template: MessageTemplate) -> None:
    """Delete the template at WhatsApp (by name and id: this language only), then here."""
    gateway_for(template.number).delete_template(template.name, template.external_id)
    now = timezone.now()
    MessageTemplate.objects.live().filter(pk=template.pk).update(deleted_at=now, updated_at=now)
