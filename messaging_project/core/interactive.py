"""WhatsApp's interactive message object and its limits, checked before anything leaves.

One rule book for every place that writes an interactive message: `POST
/api/send/interactive` and the canned replies whose response is one (saved through the
API or the admin). The limits are those of Meta's pages on interactive messages
(reply buttons, lists, call-to-action URL buttons, location requests, Flows); see
docs/messages.md.

`interactive_errors(value)` answers with the errors by dotted path under the object
(`action.buttons.3`, `action.sections.0.rows.1.title`), empty when the object is good.
"""

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

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

Errors = dict[str, list[str]]


def interactive_errors(value: Any) -> Errors:
    """Every broken limit of an interactive object, by dotted path; {} when it is good."""
    errors: Errors = {}
    if not isinstance(value, dict):
        return {"": ["Must be WhatsApp's interactive object, with its type, body and action."]}
    kind = value.get("type")
    if kind not in TYPES:
        return {"type": ["Must be one of: " + ", ".join(TYPES) + "."]}
    check_text(errors, "body.text", as_dict(value.get("body")).get("text"), BODY_MAX)
    if "header" in value and value["header"] is not None:
        check_header(errors, value["header"], text_only=kind == "list")
    if kind == "location_request_message" and value.get("header") is not None:
        errors["header"] = ["A location request has no header."]
    if "footer" in value and value["footer"] is not None:
        check_text(errors, "footer.text", as_dict(value["footer"]).get("text"), FOOTER_MAX)
    action = value.get("action")
    if not isinstance(action, dict):
        errors["action"] = ["Must be an object."]
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
        errors[path] = [f"Required: a text of 1 to {maximum} characters."]
    elif len(text) > maximum:
        errors[path] = [f"At most {maximum} characters; this has {len(text)}."]


def check_header(errors: Errors, header: Any, *, text_only: bool) -> None:
    header = as_dict(header)
    kind = header.get("type")
    allowed = ("text",) if text_only else ("text", *MEDIA_HEADERS)
    if kind not in allowed:
        errors["header.type"] = ["Must be one of: " + ", ".join(allowed) + "."]
    elif kind == "text":
        check_text(errors, "header.text", header.get("text"), HEADER_TEXT_MAX)
    else:
        media = as_dict(header.get(kind))
        if not isinstance(media.get("link") or media.get("id"), str):
            errors[f"header.{kind}"] = ["Give the media's link or its uploaded id."]
        elif media.get("link") and not is_web_url(media["link"]):
            errors[f"header.{kind}.link"] = ["Must be an http or https URL."]


def is_web_url(url: Any) -> bool:
    if not isinstance(url, str) or len(url) > URL_MAX:
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def check_unique(errors: Errors, seen: set[str], path: str, value: str, what: str) -> None:
    if value in seen:
        errors.setdefault(path, []).append(f"Each {what} must be unique; this one is repeated.")
    seen.add(value)


def check_buttons(errors: Errors, action: dict) -> None:
    buttons = action.get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= BUTTONS_MAX:
        errors["action.buttons"] = [f"Give 1 to {BUTTONS_MAX} reply buttons."]
        return
    ids: set[str] = set()
    titles: set[str] = set()
    for index, button in enumerate(buttons):
        path = f"action.buttons.{index}"
        button = as_dict(button)
        if button.get("type") != "reply":
            errors[f"{path}.type"] = ["A reply button's type is reply."]
        reply = as_dict(button.get("reply"))
        check_text(errors, f"{path}.reply.id", reply.get("id"), BUTTON_ID_MAX)
        check_text(errors, f"{path}.reply.title", reply.get("title"), BUTTON_TITLE_MAX)
        if isinstance(reply.get("id"), str):
            check_unique(errors, ids, f"{path}.reply.id", reply["id"], "button id")
        if isinstance(reply.get("title"), str):
            check_unique(errors, titles, f"{path}.reply.title", reply["title"], "button title")


def check_list(errors: Errors, action: dict) -> None:
    check_text(errors, "action.button", action.get("button"), LIST_BUTTON_MAX)
    sections = action.get("sections")
    if not isinstance(sections, list) or not 1 <= len(sections) <= SECTIONS_MAX:
        errors["action.sections"] = [f"Give 1 to {SECTIONS_MAX} sections."]
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
            errors[f"{path}.rows"] = ["A section needs at least one row."]
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
                check_unique(errors, ids, f"{row_path}.id", row["id"], "row id")
    if count > ROWS_MAX:
        errors["action.sections"] = [
            f"A list has at most {ROWS_MAX} rows in all; this has {count}."
        ]


def check_cta_url(errors: Errors, action: dict) -> None:
    if action.get("name") != "cta_url":
        errors["action.name"] = ["A call-to-action button's action name is cta_url."]
    parameters = as_dict(action.get("parameters"))
    check_text(
        errors, "action.parameters.display_text", parameters.get("display_text"), DISPLAY_TEXT_MAX
    )
    if not is_web_url(parameters.get("url")):
        errors["action.parameters.url"] = ["Must be an http or https URL."]


def check_location_request(errors: Errors, action: dict) -> None:
    if action.get("name") != "send_location":
        errors["action.name"] = ["A location request's action name is send_location."]


def check_flow(errors: Errors, action: dict) -> None:
    if action.get("name") != "flow":
        errors["action.name"] = ["A Flow message's action name is flow."]
    parameters = action.get("parameters")
    if not isinstance(parameters, dict):
        errors["action.parameters"] = ["Must be an object."]
        return
    check_text(errors, "action.parameters.flow_cta", parameters.get("flow_cta"), DISPLAY_TEXT_MAX)
    if not (parameters.get("flow_id") or parameters.get("flow_name")):
        errors["action.parameters.flow_id"] = ["Give the Flow's flow_id or flow_name."]
    if not isinstance(parameters.get("flow_message_version", "3"), str):
        errors["action.parameters.flow_message_version"] = ["Must be a text, such as 3."]


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
