"""Files staff send (the inbox's media upload): checked against what WhatsApp takes,
then put on the number's channel, to be sent by their media id.

WhatsApp's limits per kind of message: images (JPEG, PNG) 5 MB, audio and video
16 MB, documents 100 MB (docs/inbox.md).
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_noop

from business_numbers.gateway import gateway_for
from business_numbers.models import Number

MB = 1024 * 1024
# The kind of message each file type is sent as.
KINDS = {
    "image/jpeg": "image",
    "image/png": "image",
    "video/mp4": "video",
    "video/3gpp": "video",
    "audio/aac": "audio",
    "audio/amr": "audio",
    "audio/mpeg": "audio",
    "audio/mp4": "audio",
    "audio/ogg": "audio",
    "text/plain": "document",
    "application/pdf": "document",
    "application/msword": "document",
    "application/vnd.ms-excel": "document",
    "application/vnd.ms-powerpoint": "document",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "document",
}
LIMITS = {
    "image": 5 * MB,
    "video": 16 * MB,
    "audio": 16 * MB,
    "document": 100 * MB,
}

NOT_TAKEN = gettext_noop(
    "WhatsApp does not take %(type)s files: send an image (JPEG, PNG), a video (MP4), "
    "audio (AAC, MP3, M4A, OGG) or a document (PDF, text, Office)."
)
TOO_LARGE = gettext_noop("The file is too large: WhatsApp takes at most %(limit)d MB for it.")
EMPTY = gettext_noop("The file is empty.")


@dataclass(frozen=True)
class Uploaded:
    media_id: str
    media_type: str  # image, video, audio or document


def media_type_of(mime_type: str) -> str | None:
    return KINDS.get(mime_type.split(";")[0].strip().lower())


def upload_media(*, number: Number, content: bytes, mime_type: str, file_name: str) -> Uploaded:
    """Put the file on the number's channel; a ValidationError (on `media`) for a type or
    size WhatsApp does not take, a GatewayError when the channel refuses it."""
    media_type = media_type_of(mime_type)
    if media_type is None:
        raise ValidationError(
            {"media": [ValidationError(NOT_TAKEN, params={"type": mime_type or "?"})]}
        )
    if not content:
        raise ValidationError({"media": [ValidationError(EMPTY)]})
    if len(content) > LIMITS[media_type]:
        limit = LIMITS[media_type] // MB
        raise ValidationError({"media": [ValidationError(TOO_LARGE, params={"limit": limit})]})
    media_id = gateway_for(number).upload_media(
        content, mime_type=mime_type.split(";")[0].strip().lower(), file_name=file_name
    )
    return Uploaded(media_id=media_id, media_type=media_type)
