"""Inbound media: what a customer's image, voice note, video, document or sticker becomes.

- The webhook records an inbound media message's ChatMedia row and the task that
  fetches it (`attach_media` in inbound/services/message_items.py, `inbound.media.fetch_media`):
  it answers before anything is downloaded.
- `download(media)`: the task's work. Graph's `GET /{media-id}` gives a short-lived URL,
  downloaded with the organization's access token in chunks of MEDIA_CHUNK_SIZE bytes
  into a temporary file (never the whole file in memory), capped at Meta's limit for
  the type, its sha256 checked against what the channel said, then saved to Django's
  storage (`STORAGES["default"]`: the file system, or S3-compatible storage).
- The file a chat's media is offered as is sending's (sending/media_names.py).

See docs/media.md.
"""

import base64
import binascii
import hashlib
import logging
import re
import secrets
import tempfile
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage

from business_numbers.gateway import GatewayError, MediaTooLarge, gateway_for
from business_numbers.models import Number
from messaging_project.core.storable import is_storable_json, without_unstorable
from sending.media_names import extension
from sending.models import ChatMedia

logger = logging.getLogger(__name__)

# Meta's limits per media type (its page on supported media types): 5 MB images, 16 MB
# audio and video, 100 MB documents, 500 KB stickers (animated; a static one is 100 KB).
MB = 1024 * 1024
MAX_BYTES = {
    "image": 5 * MB,
    "audio": 16 * MB,
    "video": 16 * MB,
    "document": 100 * MB,
    "sticker": 500 * 1024,
}
# What an inbound message's `type` says, and the kind kept: an old-style `voice` is audio.
INBOUND_KINDS = {
    "image": "image",
    "audio": "audio",
    "voice": "audio",
    "video": "video",
    "document": "document",
    "sticker": "sticker",
}
MEDIA_ID = re.compile(r"[0-9A-Za-z_.:-]{1,255}")
MIME_TYPE = re.compile(r"[\w.+-]+/[\w.+-]+")


class MediaFailed(Exception):
    """A download that did not give the file. `retryable`: a later attempt may succeed."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


@dataclass(frozen=True)
class Stored:
    name: str  # the storage's name of the file
    size: int
    mime_type: str


def clean(value: Any, limit: int) -> str:
    if not isinstance(value, str) or not is_storable_json(value):
        return ""
    return without_unstorable(value).strip()[:limit]


def number_of(media: ChatMedia) -> Number:
    """The number the media's message came to (its download goes through it)."""
    number = Number.objects.filter(chats__media=media).first()
    return number or Number.objects.default_for(media.organization)


def download(media: ChatMedia) -> Stored:
    """Fetch the media from the organization's channel into storage. Raises MediaFailed
    (and ChannelNotConfigured)."""
    gateway = gateway_for(number_of(media))
    limit = MAX_BYTES.get(media.kind, MAX_BYTES["document"])
    chunk_size = settings.MEDIA_CHUNK_SIZE
    try:
        info = gateway.media_info(media.media_id)
        if info["file_size"] is not None and info["file_size"] > limit:
            raise MediaTooLarge(f"{info['file_size']} bytes, at most {limit} allowed")
        digest = hashlib.sha256()
        size = 0
        with tempfile.TemporaryFile(prefix="media-") as spooled:
            for chunk in gateway.download_media(
                info["url"], max_bytes=limit, chunk_size=chunk_size
            ):
                digest.update(chunk)
                spooled.write(chunk)
                size += len(chunk)
            expected = [value for value in (info["sha256"], media.sha256) if value]
            if not all(same_digest(digest.digest(), value) for value in expected):
                raise MediaFailed(
                    "The downloaded file does not match the sha256 WhatsApp gave.",
                    retryable=True,  # a transfer gone wrong; the next may be whole
                )
            mime_type = usable_mime_type(info["mime_type"]) or usable_mime_type(media.mime_type)
            spooled.seek(0)
            name = default_storage.save(storage_name(media, mime_type), File(spooled))
    except MediaTooLarge as error:
        raise MediaFailed(
            f"The {media.kind} is larger than WhatsApp's limit of {limit} bytes ({error}).",
            retryable=False,
        ) from None
    except GatewayError as error:
        raise MediaFailed(described(error), retryable=error.retryable) from None
    return Stored(name=name, size=size, mime_type=mime_type or "application/octet-stream")


def described(error: GatewayError) -> str:
    code = f" (code {error.code})" if error.code is not None else ""
    status = f" [HTTP {error.http_status}]" if error.http_status is not None else ""
    return f"{error.kind}: {error.message}{code}{status}"


def same_digest(digest: bytes, expected: str) -> bool:
    """Whether `expected` is this sha256, in hex (Graph's media URL answer) or base64
    (what webhooks have carried)."""
    if expected.lower() == digest.hex():
        return True
    try:
        return base64.b64decode(expected, validate=True) == digest
    except (binascii.Error, ValueError):
        return False


def usable_mime_type(value: str) -> str:
    """`image/jpeg` from `image/jpeg` or `audio/ogg; codecs=opus`'s first part; else ""."""
    base = value.split(";", 1)[0].strip().lower()
    return base if MIME_TYPE.fullmatch(base) else ""


def storage_name(media: ChatMedia, mime_type: str) -> str:
    """Under the organization, a random name: nothing a customer wrote reaches a path."""
    organization = media.organization.uuid
    return f"media/{organization}/{media.kind}-{secrets.token_hex(12)}{extension(mime_type)}"
