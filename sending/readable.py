"""A chat's message as a person reads it: its text, its media, the template and the values
of its variables, the choice a customer tapped, read from the chat's metadata (what was
sent, or what WhatsApp brought in) for the admin's chat page.

Every shape the service records is read (docs/api.md, "Chat metadata"); a part it does
not know is left out here, and the page still shows the metadata as recorded, folded.
"""

import json
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext

from messaging_project.core.interactive import flow_response

MEDIA_KINDS = ("image", "audio", "video", "document", "sticker")


@dataclass
class ReadableMessage:
    kind: str  # the metadata's type: text, image, template, interactive, button, ...
    header: str = ""
    body: str = ""
    footer: str = ""
    buttons: list[str] = field(default_factory=list)  # the choices offered
    template: str = ""  # its name, when the message is a template
    language: str = ""
    variables: list[tuple[str, str]] = field(default_factory=list)  # (which, value)
    media_kind: str = ""
    media_link: str = ""  # a sent media's URL (a received one is the chat's stored file)
    file_name: str = ""
    choice: str = ""  # what the customer tapped: a button's or a list row's title
    choice_id: str = ""  # the id or payload it carries
    location: str = ""
    reaction: str = ""
    replying_to: str = ""  # the message id this one answers
    answers: list[tuple[str, str]] = field(default_factory=list)  # a Flow's, (field, value)


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list:
    return value if isinstance(value, list) else []


def readable(metadata: Any) -> ReadableMessage:
    metadata = mapping(metadata)
    message = ReadableMessage(kind=text(metadata.get("type")) or "unknown")
    words = mapping(metadata.get("text"))
    message.header, message.body = text(words.get("header")), text(words.get("body"))
    message.footer = text(words.get("footer"))
    message.buttons = [
        text(button.get("text")) for button in map(mapping, items(metadata.get("buttons")))
    ]
    message.replying_to = text(mapping(metadata.get("context")).get("message_id"))
    template = mapping(metadata.get("template"))
    if template:
        read_template(message, template)
    kind = message.kind
    if kind in MEDIA_KINDS:
        media = mapping(metadata.get(kind))
        message.media_kind = kind
        message.media_link = text(media.get("link"))
        message.file_name = text(media.get("filename"))
        message.body = message.body or text(media.get("caption"))
    elif kind == "button":  # a template's quick-reply button, tapped
        button = mapping(metadata.get("button"))
        message.choice, message.choice_id = text(button.get("text")), text(button.get("payload"))
        message.body = ""
    elif kind == "interactive":
        read_interactive(
            message, mapping(metadata.get("interactive")), mapping(metadata.get("choice"))
        )
    elif kind == "location":
        place = mapping(metadata.get("location"))
        where = [text(place.get("name")), text(place.get("address"))]
        coordinates = f"{place.get('latitude')}, {place.get('longitude')}"
        message.location = " · ".join([part for part in where if part] + [coordinates])
    elif kind == "reaction":
        message.reaction = text(mapping(metadata.get("reaction")).get("emoji"))
    return message


def read_template(message: ReadableMessage, template: dict) -> None:
    """A template as sent: known here (its text rendered when sent) or only by name, with
    the values its components gave each variable."""
    message.template = text(template.get("name"))
    language = template.get("language")
    message.language = text(mapping(language).get("code")) or text(language)
    for component in map(mapping, items(template.get("components"))):
        part = text(component.get("type")).lower() or "body"
        index = component.get("index")
        for position, parameter in enumerate(map(mapping, items(component.get("parameters"))), 1):
            name = text(parameter.get("parameter_name")) or str(position)
            where = f"{part} {index}" if index is not None else part
            which = f"{where} {{{{{name}}}}}"
            message.variables.append((which, parameter_value(parameter)))


def parameter_value(parameter: dict) -> str:
    kind = text(parameter.get("type"))
    if "text" in parameter:
        return text(parameter.get("text"))
    if kind in ("currency", "date_time"):
        return text(mapping(parameter.get(kind)).get("fallback_value"))
    if kind == "payload":
        return text(parameter.get("payload"))
    if kind in MEDIA_KINDS:
        media = mapping(parameter.get(kind))
        return text(media.get("link")) or text(media.get("id"))
    return ""


def flow_answers(response: Any) -> list[tuple[str, str]]:
    """A Flow's answers as a person reads them, (field, value) in the order WhatsApp sent
    them: `response_json` parsed (the chat's `choice.response`), or as sent when it did
    not parse. The `flow_token` is the business's own marker, not an answer."""
    if isinstance(response, str):
        return [("", response)] if response.strip() else []
    return [
        (str(name), value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for name, value in mapping(response).items()
        if name != "flow_token"
    ]


def read_interactive(message: ReadableMessage, interactive: dict, choice: dict) -> None:
    """A customer's reply to buttons or a list (the row they tapped), a Flow's answers,
    or a message with buttons as WhatsApp describes it."""
    kind = text(interactive.get("type"))
    reply = mapping(interactive.get(kind))
    if kind in ("button_reply", "list_reply"):
        message.choice, message.choice_id = text(reply.get("title")), text(reply.get("id"))
        message.body = text(reply.get("description"))
        return
    if kind == "nfm_reply":
        # What the customer filled in: parsed when the webhook kept it, else read here.
        response = choice["response"] if "response" in choice else reply.get("response_json")
        message.answers = flow_answers(flow_response(response))
        message.body = ""
        return
    if not message.body:
        message.body = text(mapping(interactive.get("body")).get("text"))
    if not message.buttons:  # a send's chat has its reply buttons and rows there already
        message.buttons = offered_buttons(interactive)


def offered_buttons(interactive: dict) -> list[str]:
    """What an interactive message offers to tap, as WhatsApp shows it: its reply buttons'
    and list rows' titles, a call-to-action URL's or a Flow's button text, a location
    request's button (WhatsApp writes it in the customer's language: here the staff's)."""
    action = mapping(interactive.get("action"))
    parameters = mapping(action.get("parameters"))
    kind = text(interactive.get("type"))
    if kind == "cta_url":
        return [text(parameters.get("display_text"))]
    if kind == "flow":
        return [text(parameters.get("flow_cta"))]
    if kind == "location_request_message":
        return [gettext("Send location")]
    titles = [
        text(mapping(button.get("reply")).get("title"))
        for button in map(mapping, items(action.get("buttons")))
    ]
    for section in map(mapping, items(action.get("sections"))):
        titles.extend(text(row.get("title")) for row in map(mapping, items(section.get("rows"))))
    return titles
