"""The Cloud API's message payloads, exactly as Meta documents them."""

from typing import Any


def addressed(payload: dict[str, Any], *, phone: str, user_id: str) -> dict[str, Any]:
    """To the number; to a user whose number WhatsApp withholds, by their business-scoped
    user id in `recipient` instead of `to`, as Meta documents for such users."""
    if phone or not user_id:
        return payload
    payload = {key: value for key, value in payload.items() if key != "to"}
    return {**payload, "recipient": user_id}


# Meta's limit on biz_opaque_callback_data.
CALLBACK_DATA_MAX = 512


def with_callback(payload: dict[str, Any], callback_data: str) -> dict[str, Any]:
    """The payload with `biz_opaque_callback_data` naming the send: WhatsApp returns it in
    the message's status webhooks, so a status can settle a send whose answer was lost
    (sending/services/settlement.py)."""
    if not callback_data:
        return payload
    return {**payload, "biz_opaque_callback_data": callback_data[:CALLBACK_DATA_MAX]}


def replying(payload: dict[str, Any], message_id: str | None) -> dict[str, Any]:
    """The message as a reply to `message_id` (Meta's top-level `context`), when given."""
    if not message_id:
        return payload
    return {**payload, "context": {"message_id": message_id}}


def text_payload(*, phone: str, message: str, preview_url: bool = True) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": "text",
        # True by default, as the original product: WhatsApp shows a preview only when
        # the text has a URL.
        "text": {"preview_url": preview_url, "body": message},
    }


def button_payload(
    *,
    phone: str,
    message: str,
    buttons: list[dict[str, str]],
    header: str | None = None,
    footer: str | None = None,
) -> dict[str, Any]:
    interactive: dict[str, Any] = {"type": "button"}
    if header:
        interactive["header"] = {"type": "text", "text": header}
    interactive["body"] = {"text": message}
    if footer:
        interactive["footer"] = {"text": footer}
    interactive["action"] = {
        "buttons": [
            {"type": "reply", "reply": {"id": button["id"], "title": button["title"]}}
            for button in buttons
        ]
    }
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": "interactive",
        "interactive": interactive,
    }


# Message types sent as WhatsApp's own object under the type's name (Meta's pages on
# interactive, reaction, location and contacts messages).
CONTENT_TYPES = ("interactive", "reaction", "location", "contacts")


def content_payload(*, phone: str, kind: str, content: Any) -> dict[str, Any]:
    """`{"type": kind, kind: content}`: an interactive object, a reaction, a location, or a
    list of contact cards, passed on as the caller checked it."""
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": kind,
        kind: content,
    }


def template_payload(*, phone: str, template: dict[str, Any]) -> dict[str, Any]:
    language = {"code": template["language"]["code"]}
    body: dict[str, Any] = {"name": template["name"], "language": language}
    if template.get("components") is not None:
        body["components"] = template["components"]
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": "template",
        "template": body,
    }


# What each media type may carry besides its link (Meta's pages on media messages):
# a caption on images, videos and documents, a file name on documents only.
MEDIA_TYPES = ("image", "document", "audio", "video", "sticker")
CAPTION_TYPES = ("image", "video", "document")
FILE_NAME_TYPES = ("document",)


def media_payload(
    *,
    phone: str,
    media_type: str,
    link: str | None = None,
    media_id: str | None = None,
    caption: str | None = None,
    file_name: str | None = None,
) -> dict[str, Any]:
    """A media message sent by link or by an uploaded media's id: `{"type": T, T: {"link"
    or "id", "caption"?, "filename"?}}`. A caption or file name the type does not take
    is left out (the original product's clients send both for every type)."""
    media: dict[str, Any] = {"id": media_id} if media_id else {"link": link}
    if caption and media_type in CAPTION_TYPES:
        media["caption"] = caption
    if file_name and media_type in FILE_NAME_TYPES:
        media["filename"] = file_name
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": media_type,
        media_type: media,
    }
