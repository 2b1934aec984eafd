"""WhatsApp's interactive message object and its limits, checked before anything leaves.

One rule book for every place that writes an interactive message: `POST
/api/send/interactive` and the canned replies whose response is one (saved through the
API or the admin). The limits are those of Meta's pages on interactive messages
(reply buttons, lists, call-to-action URL buttons, location requests, Flows); see
docs/messages.md.

`interactive_errors(value)` answers with the errors by dotted path under the object
(`action.buttons.3`, `action.sections.0.rows.1.title`), empty when the object is good.
Each error is a ValidationError whose message is marked with gettext_noop and whose
numbers are its params: the API shows it in English (`in_english`), the admin in the
staff member's language (messaging_project/core/service_admin.py, `translated`).
"""

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_noop

TYPES = ("button", "list", "cta_url", "location_request_message", "flow")
BODY_MAX = 1024
HEADER_TEXT_MAX = FOOTER_MAX = 60
BUTTONS_MAX = 3
BUTTON_TITLE_MAX = 20
BUTTON_ID_MAX = 256
LIST_BUTTON_MAX = 20
SECTIONS_MAX = 10
ROWS_MAX = 10  # in all the sections together
SECTION_TITLE_MAX = 24
ROW_ID_MAX = 200
ROW_TITLE_MAX = 24
ROW_DESCRIPTION_MAX = 72
DISPLAY_TEXT_MAX = 20  # a cta_url button's text, a Flow's button text
URL_MAX = 2000
MEDIA_HEADERS = ("image", "video", "document")

# Messages shared by several rules (and by the template rules: business_numbers).
REQUIRED_TEXT = gettext_noop("Required: a text of 1 to %(maximum)s characters.")
TOO_LONG = gettext_noop("At most %(maximum)s characters; this has %(length)s.")
WEB_URL = gettext_noop("Must be an http or https URL.")
MUST_BE_AN_OBJECT = gettext_noop("Must be an object.")
REPEATED_BUTTON_ID = gettext_noop("Each button id must be unique; this one is repeated.")
REPEATED_BUTTON_TITLE = gettext_noop("Each button title must be unique; this one is repeated.")
REPEATED_ROW_ID = gettext_noop("Each row id must be unique; this one is repeated.")

Errors = dict[str, list[ValidationError]]


def problem(message: str, **params: Any) -> ValidationError:
    """One broken rule: `message` marked with gettext_noop, its numbers as params."""
    return ValidationError(message, params=params or None)


def in_english(errors: Errors) -> dict[str, list[str]]:
    """The errors as the API answers them: each message with its params applied."""
    return {path: ValidationError(found).messages for path, found in errors.items()}


def one_of(choices: tuple[str, ...]) -> ValidationError:
    return problem(gettext_noop("Must be one of: %(choices)s."), choices=", ".join(choices))


def interactive_errors(value: Any) -> Errors:
    """Every broken limit of an interactive object, by dotted path; {} when it is good."""
    errors: Errors = {}
    if not isinstance(value, dict):
        return {
            "": [
                problem(
                    gettext_noop(
                        "Must be WhatsApp's interactive object, with its type, body and action."
                    )
                )
            ]
        }
    kind = value.get("type")
    if kind not in TYPES:
        return {"type": [one_of(TYPES)]}
    check_text(errors, "body.text", as_dict(value.get("body")).get("text"), BODY_MAX)
    if "header" in value and value["header"] is not None:
        check_header(errors, value["header"], text_only=kind == "list")
    if kind == "location_request_message" and value.get("header") is not None:
        errors["header"] = [problem(gettext_noop("A location request has no header."))]
    if "footer" in value and value["footer"] is not None:
        check_text(errors, "footer.text", as_dict(value["footer"]).get("text"), FOOTER_MAX)
    action = value.get("action")
    if not isinstance(action, dict):
        errors["action"] = [problem(MUST_BE_AN_OBJECT)]
        return errors
    CHECKS[kind](errors, action)
    return errors


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def check_text(
    errors: Errors, path: str, text: Any, maximum: int, *, required: bool = True
) -> None:
    if text is None and not required:
        return
    if not isinstance(text, str) or not text.strip():
        errors[path] = [problem(REQUIRED_TEXT, maximum=maximum)]
    elif len(text) > maximum:
        errors[path] = [problem(TOO_LONG, maximum=maximum, length=len(text))]


def check_header(errors: Errors, header: Any, *, text_only: bool) -> None:
    header = as_dict(header)
    kind = header.get("type")
    allowed = ("text",) if text_only else ("text", *MEDIA_HEADERS)
    if kind not in allowed:
        errors["header.type"] = [one_of(allowed)]
    elif kind == "text":
        check_text(errors, "header.text", header.get("text"), HEADER_TEXT_MAX)
    else:
        media = as_dict(header.get(kind))
        if not isinstance(media.get("link") or media.get("id"), str):
            errors[f"header.{kind}"] = [
                problem(gettext_noop("Give the media's link or its uploaded id."))
            ]
        elif media.get("link") and not is_web_url(media["link"]):
            errors[f"header.{kind}.link"] = [problem(WEB_URL)]


def is_web_url(url: Any) -> bool:
    if not isinstance(url, str) or len(url) > URL_MAX:
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def check_unique(errors: Errors, seen: set[str], path: str, value: str, repeated: str) -> None:
    """`repeated`: the message for a value seen before (gettext_noop)."""
    if value in seen:
        errors.setdefault(path, []).append(problem(repeated))
    seen.add(value)


def check_buttons(errors: Errors, action: dict) -> None:
    buttons = action.get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= BUTTONS_MAX:
        errors["action.buttons"] = [
            problem(gettext_noop("Give 1 to %(maximum)s reply buttons."), maximum=BUTTONS_MAX)
        ]
        return
    ids: set[str] = set()
    titles: set[str] = set()
    for index, button in enumerate(buttons):
        path = f"action.buttons.{index}"
        button = as_dict(button)
        if button.get("type") != "reply":
            errors[f"{path}.type"] = [problem(gettext_noop("A reply button's type is reply."))]
        reply = as_dict(button.get("reply"))
        check_text(errors, f"{path}.reply.id", reply.get("id"), BUTTON_ID_MAX)
        check_text(errors, f"{path}.reply.title", reply.get("title"), BUTTON_TITLE_MAX)
        if isinstance(reply.get("id"), str):
            check_unique(errors, ids, f"{path}.reply.id", reply["id"], REPEATED_BUTTON_ID)
        if isinstance(reply.get("title"), str):
            check_unique(
                errors, titles, f"{path}.reply.title", reply["title"], REPEATED_BUTTON_TITLE
            )


def check_list(errors: Errors, action: dict) -> None:
    check_text(errors, "action.button", action.get("button"), LIST_BUTTON_MAX)
    sections = action.get("sections")
    if not isinstance(sections, list) or not 1 <= len(sections) <= SECTIONS_MAX:
        errors["action.sections"] = [
            problem(gettext_noop("Give 1 to %(maximum)s sections."), maximum=SECTIONS_MAX)
        ]
        return
    ids: set[str] = set()
    count = 0
    for index, section in enumerate(sections):
        path = f"action.sections.{index}"
        section = as_dict(section)
        # One section may go without a title; several each need theirs.
        check_text(
            errors,
            f"{path}.title",
            section.get("title"),
            SECTION_TITLE_MAX,
            required=len(sections) > 1,
        )
        rows = section.get("rows")
        if not isinstance(rows, list) or not rows:
            errors[f"{path}.rows"] = [problem(gettext_noop("A section needs at least one row."))]
            continue
        for number, row in enumerate(rows):
            count += 1
            row_path = f"{path}.rows.{number}"
            row = as_dict(row)
            check_text(errors, f"{row_path}.id", row.get("id"), ROW_ID_MAX)
            check_text(errors, f"{row_path}.title", row.get("title"), ROW_TITLE_MAX)
            check_text(
                errors,
                f"{row_path}.description",
                row.get("description"),
                ROW_DESCRIPTION_MAX,
                required=False,
            )
            if isinstance(row.get("id"), str):
                check_unique(errors, ids, f"{row_path}.id", row["id"], REPEATED_ROW_ID)
    if count > ROWS_MAX:
        errors["action.sections"] = [
            problem(
                gettext_noop("A list has at most %(maximum)s rows in all; this has %(count)s."),
                maximum=ROWS_MAX,
                count=count,
            )
        ]


def check_cta_url(errors: Errors, action: dict) -> None:
    if action.get("name") != "cta_url":
        errors["action.name"] = [
            problem(gettext_noop("A call-to-action button's action name is cta_url."))
        ]
    parameters = as_dict(action.get("parameters"))
    check_text(
        errors, "action.parameters.display_text", parameters.get("display_text"), DISPLAY_TEXT_MAX
    )
    if not is_web_url(parameters.get("url")):
        errors["action.parameters.url"] = [problem(WEB_URL)]


def check_location_request(errors: Errors, action: dict) -> None:
    if action.get("name") != "send_location":
        errors["action.name"] = [
            problem(gettext_noop("A location request's action name is send_location."))
        ]


def check_flow(errors: Errors, action: dict) -> None:
    if action.get("name") != "flow":
        errors["action.name"] = [problem(gettext_noop("A Flow message's action name is flow."))]
    parameters = action.get("parameters")
    if not isinstance(parameters, dict):
        errors["action.parameters"] = [problem(MUST_BE_AN_OBJECT)]
        return
    check_text(errors, "action.parameters.flow_cta", parameters.get("flow_cta"), DISPLAY_TEXT_MAX)
    if not (parameters.get("flow_id") or parameters.get("flow_name")):
        errors["action.parameters.flow_id"] = [
            problem(gettext_noop("Give the Flow's flow_id or flow_name."))
        ]
    if not isinstance(parameters.get("flow_message_version", "3"), str):
        errors["action.parameters.flow_message_version"] = [
            problem(gettext_noop("Must be a text, such as 3."))
        ]


CHECKS = {
    "button": check_buttons,
    "list": check_list,
    "cta_url": check_cta_url,
    "location_request_message": check_location_request,
    "flow": check_flow,
}


def reply_choices(value: dict) -> list[dict[str, str]]:
    """The choices a customer can tap in an interactive object: each reply button's and
    list row's `id` and `title` (what a tap sends back), in order."""
    action = as_dict(value.get("action"))
    if value.get("type") == "button":
        return [
            {"id": str(reply.get("id", "")), "title": str(reply.get("title", ""))}
            for reply in (as_dict(as_dict(b).get("reply")) for b in action.get("buttons") or [])
        ]
    if value.get("type") == "list":
        return [
            {"id": str(row.get("id", "")), "title": str(row.get("title", ""))}
            for section in action.get("sections") or []
            for row in (as_dict(r) for r in as_dict(section).get("rows") or [])
        ]
    return []


def with_texts_filled(value: dict, fill: Callable[[str], str]) -> dict:
    """The object with `fill` applied to its body, text header and footer (a canned
    reply's placeholders), each cut to its limit: filling must not make WhatsApp refuse
    what was checked when it was saved. Buttons and rows are left as written: their ids
    are what a tap sends back."""
    filled = dict(value)
    for part, limit in (("body", BODY_MAX), ("header", HEADER_TEXT_MAX), ("footer", FOOTER_MAX)):
        piece = value.get(part)
        if isinstance(piece, dict) and isinstance(piece.get("text"), str):
            if part == "header" and piece.get("type") != "text":
                continue
            text = fill(piece["text"])[:limit]
            filled[part] = {**piece, "text": text if text.strip() else piece["text"]}
    return filled


def flow_response(response_json: Any) -> Any:
    """A Flow's answers (`nfm_reply.response_json`): WhatsApp sends them as JSON text;
    parsed when they parse into an object, else as WhatsApp sent them."""
    if not isinstance(response_json, str):
        return response_json
    try:
        parsed = json.loads(response_json)
    except (ValueError, RecursionError):
        return response_json
    return parsed if isinstance(parsed, dict) else response_json
