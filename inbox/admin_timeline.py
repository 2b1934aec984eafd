"""A conversation's timeline as the admin inbox shows it: each chat as the message a
person reads (its text, media, template, the choice a customer tapped, its ticks),
and the internal notes among them, oldest first."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from sending.models import Chat, ChatSource, ChatStatus, ChatType, Conversation, MediaState
from sending.readable import readable

MEDIA_TYPES = ("image", "audio", "video", "document", "sticker")
# The ticks beside an outbound message, as WhatsApp draws them.
TICKS: dict[str, str] = {
    ChatStatus.ACCEPTED: "🕓",
    ChatStatus.HELD_FOR_QUALITY_ASSESSMENT: "🕓",
    ChatStatus.PAUSED: "🕓",
    ChatStatus.SENT: "✓",
    ChatStatus.DELIVERED: "✓✓",
    ChatStatus.READ: "✓✓",
    ChatStatus.PLAYED: "✓✓",
    ChatStatus.FAILED: "✗",
}
KIND_NAMES = {
    "image": _("Image"),
    "audio": _("Audio"),
    "video": _("Video"),
    "document": _("Document"),
    "sticker": _("Sticker"),
    "location": _("Location"),
    "contacts": _("Contact card"),
    "reaction": _("Reaction"),
    "order": _("Order"),
    "system": _("System message"),
}
FLOW_ANSWERS = _("Flow answers")


@dataclass
class Message:
    """One chat, ready for the template."""

    chat: Chat
    inbound: bool
    time: datetime  # when the service recorded it: the order of the timeline
    text: str = ""
    header: str = ""
    footer: str = ""
    kind: str = ""  # a media or other non-text kind, as KIND_NAMES names it
    media_url: str = ""  # the admin's URL of an inbound chat's stored media
    media_type: str = ""  # image, audio, video, document, sticker
    media_note: str = ""  # media not stored (yet): why
    link: str = ""  # an outbound media message's link
    template: str = ""  # the template's name
    buttons: list[str] = field(default_factory=list)
    choice: str = ""  # the button or list row an inbound message tapped
    quoted: "Message | None" = None
    quoted_id: str = ""
    echo: bool = False  # written in the WhatsApp Business app
    author: str = ""  # the staff member who sent it from the inbox
    revoked: bool = False

    @property
    def ticks(self) -> str:
        return "" if self.inbound else TICKS.get(self.chat.status, "")

    @property
    def status_label(self) -> str:
        return str(ChatStatus(self.chat.status).label) if self.chat.status in ChatStatus else ""

    @property
    def failed(self) -> bool:
        return self.chat.status == ChatStatus.FAILED

    @property
    def is_note(self) -> bool:
        return False


@dataclass
class NoteEntry:
    note: Any
    time: datetime

    @property
    def is_note(self) -> bool:
        return True


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def message_of(chat: Chat, conversation: Conversation) -> Message:
    metadata = as_dict(chat.metadata)
    kind = text_of(metadata.get("type"))
    message = Message(
        chat=chat,
        inbound=chat.type == ChatType.INBOUND,
        time=chat.created_at,
        echo=chat.source == ChatSource.BUSINESS_APP,
        revoked=bool(metadata.get("revoked")),
        quoted_id=text_of(as_dict(metadata.get("context")).get("message_id"))
        or text_of(as_dict(metadata.get("context")).get("id")),
    )
    # What the message says, read as the chat's admin page reads it (sending.readable).
    read = readable(metadata)
    message.text, message.header, message.footer = read.body, read.header, read.footer
    message.buttons = read.buttons
    template = as_dict(metadata.get("template"))
    if template:
        message.template = read.template
        if not message.text:  # a template not synced here: its parameters as sent
            message.text = ", ".join(sent_parameters(template))
    if kind in ("interactive", "button") and message.inbound:
        message.choice = read.choice or read.choice_id  # a tap: a button or a list row
        if as_dict(metadata.get("interactive")).get("type") == "nfm_reply":  # a Flow's answers
            message.kind = str(FLOW_ANSWERS)
            message.text = "\n".join(
                f"{name}: {value}" if name else value for name, value in read.answers
            )
    elif kind in MEDIA_TYPES and not template:
        describe_media(message, chat, as_dict(metadata.get(kind)), kind, conversation)
    elif kind == "reaction":
        message.kind, message.text = str(KIND_NAMES["reaction"]), read.reaction
    elif kind == "location":
        message.kind, message.text = str(KIND_NAMES["location"]), read.location
    elif kind in KIND_NAMES:
        message.kind = str(KIND_NAMES[kind])
    elif not message.text and not template:
        message.kind = gettext("A %(type)s message") % {"type": kind or "?"}
    return message


def describe_media(
    message: Message, chat: Chat, content: dict[str, Any], kind: str, conversation: Conversation
) -> None:
    message.kind = str(KIND_NAMES[kind])
    message.media_type = kind
    message.text = text_of(content.get("caption"))
    if not message.inbound:
        message.link = text_of(content.get("link"))
        message.media_note = text_of(content.get("filename"))
        return
    media = chat.media
    if media is not None and media.state == MediaState.AVAILABLE:
        message.media_url = reverse("inbox_admin:media", args=[conversation.uuid, chat.uuid])
    elif media is not None and media.state == MediaState.FAILED:
        message.media_note = gettext("The file could not be fetched from WhatsApp.")
    else:
        message.media_note = gettext("The file is on its way from WhatsApp.")
    if kind == "document":
        message.media_note = text_of(content.get("filename")) or message.media_note


def sent_parameters(template: dict[str, Any]) -> list[str]:
    values = []
    for component in template.get("components") or []:
        for parameter in as_dict(component).get("parameters") or []:
            value = as_dict(parameter).get("text")
            if isinstance(value, str):
                values.append(value)
    return values


def timeline(
    chats: list[Chat], notes: list[Any], conversation: Conversation, staff: dict[int, str]
) -> list[Message | NoteEntry]:
    """The chats and notes in the order they happened; a reply shows the message it
    answers when that message is on the page, a staff member's message who sent it
    (`staff`: usernames by user id)."""
    messages = [message_of(chat, conversation) for chat in chats]
    for message in messages:
        message.author = staff.get(message.chat.created_by, "")
    by_wam_id = {message.chat.wam_id: message for message in messages if message.chat.wam_id}
    for message in messages:
        message.quoted = by_wam_id.get(message.quoted_id)
    entries: list[Message | NoteEntry] = [*messages]
    entries += [NoteEntry(note=note, time=note.created_at) for note in notes]
    entries.sort(key=lambda entry: entry.time)
    return entries
