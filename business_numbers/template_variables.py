"""A template's variables, read from its components, and the components a send gives them.

What a person fills in to send a template (the admin's campaign form): each placeholder of
its text header and body (`{{1}}` or `{{first_name}}`), the file of a media header, and
the placeholder of each URL button; then `components` builds them into the send's
components, as /api/send/template takes them.
"""

from dataclasses import dataclass
from typing import Any

from business_numbers.models import MessageTemplate
from business_numbers.services.templates import placeholders

MEDIA_FORMATS = ("IMAGE", "VIDEO", "DOCUMENT")


@dataclass(frozen=True)
class TemplateVariable:
    key: str  # unique within the template: header_1, body_first_name, button_1_1, ...
    part: str  # header, body or button
    name: str  # the placeholder's name (`1`, `first_name`), or the media header's format
    text: str  # the text it appears in (the body, the button's URL), for the person
    button_index: int | None = None
    media: str = ""  # image, video or document: a header's file, given by its link

    @property
    def named(self) -> bool:
        return not self.name.isdigit() and not self.media


def in_order(text: str) -> list[str]:
    """The placeholders of a text in the order of their parameters: `{{1}}`, `{{2}}`...
    by number; named ones as they appear."""
    names = placeholders(text)
    return sorted(names, key=int) if all(name.isdigit() for name in names) else names


def template_variables(template: MessageTemplate) -> list[TemplateVariable]:
    variables: list[TemplateVariable] = []
    header = template.component("HEADER") or {}
    header_format = str(header.get("format", "TEXT")).upper()
    if header_format in MEDIA_FORMATS:
        media = header_format.lower()
        variables.append(TemplateVariable(f"header_{media}", "header", media, "", media=media))
    elif header:
        text = str(header.get("text", ""))
        variables += [
            TemplateVariable(f"header_{name}", "header", name, text) for name in in_order(text)
        ]
    body = str((template.component("BODY") or {}).get("text", ""))
    variables += [TemplateVariable(f"body_{name}", "body", name, body) for name in in_order(body)]
    buttons = (template.component("BUTTONS") or {}).get("buttons") or []
    for index, button in enumerate(buttons):
        if not isinstance(button, dict) or str(button.get("type", "")).upper() != "URL":
            continue
        url = str(button.get("url", ""))
        variables += [
            TemplateVariable(f"button_{index}_{name}", "button", name, url, button_index=index)
            for name in in_order(url)
        ]
    return variables


def parameter(variable: TemplateVariable, value: str) -> dict[str, Any]:
    if variable.media:
        return {"type": variable.media, variable.media: {"link": value}}
    if variable.named:
        return {"type": "text", "parameter_name": variable.name, "text": value}
    return {"type": "text", "text": value}


def components(variables: list[TemplateVariable], values: dict[str, str]) -> list[dict[str, Any]]:
    """The send's components giving each variable its value (`values` by key), in the
    template's order: header, body, then each URL button."""
    parts: dict[tuple[str, int | None], list[dict[str, Any]]] = {}
    for variable in variables:
        parts.setdefault((variable.part, variable.button_index), []).append(
            parameter(variable, values[variable.key])
        )
    built = []
    for (part, index), parameters in parts.items():
        component: dict[str, Any] = {"type": part, "parameters": parameters}
        if part == "button":
            component.update(sub_type="url", index=str(index))
        built.append(component)
    return built
