"""The names a chat's stored media goes by: its extension by MIME type, and the file name
`GET /api/chats/{uuid}/media` and the admin offer (docs/media.md)."""

import mimetypes
import re

from sending.models import Chat, ChatMedia

SAFE_NAME = re.compile(r"[^\w .()+-]")


def extension(mime_type: str) -> str:
    if mime_type == "audio/ogg":
        return ".ogg"  # mimetypes says .oga
    return mimetypes.guess_extension(mime_type or "", strict=False) or ""


def download_name(media: ChatMedia, chat: Chat) -> str:
    """A document's own name (cleaned), or the kind and the chat's uuid with an extension."""
    if media.file_name:
        name = SAFE_NAME.sub("_", media.file_name).strip(" .")
        if name:
            return name[:200]
    return f"{media.kind}-{chat.uuid}{extension(media.mime_type)}"
