"""The channel gateway's interface and its one error type.

Everything that talks to WhatsApp (the Cloud API client, the sandbox) looks like
`Gateway`. Every way a send can fail becomes a `GatewayError` that says what went
wrong (its `kind`, Graph's own fields) and whether trying again could help. It knows
nothing of HTTP statuses or chats: the send service records the failed chat, and the
API (sending/api/views.py) turns the `kind` into the contract's status code.
"""

from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import Any, Protocol

from business_numbers.gateway import storable

NOT_CONFIGURED = "Please setup your whatsapp account!"


class ChannelNotConfigured(Exception):
    """The organization cannot send: its Cloud API settings are incomplete."""

    def __init__(self, detail: str = NOT_CONFIGURED) -> None:
        super().__init__(detail)
        self.detail = detail


class NotWritten(Exception):
    """A send's `may_write` answered no: its request was not written, so nothing of it
    reached the channel (not a GatewayError: the channel was never asked)."""


class FailureKind(StrEnum):
    REFUSED = "refused"  # Graph answered with an error about the message (4xx)
    CREDENTIALS = "credentials"  # Graph rejected our access token or its permissions
    UNAVAILABLE = "unavailable"  # unreachable, reset, 5xx, or an answer we cannot read
    TIMEOUT = "timeout"  # no answer in time


class GatewayError(Exception):
    """A send or look-up the channel did not accept, with Graph's error object if it sent one.

    Whatever Graph put in its error object, the fields hold only what can be stored and
    shown (see `storable`): texts cleaned and capped, details as bounded JSON, and a
    `code` only when the chat's `error_code` column can hold it (`unusable_code` keeps
    any other value Graph gave, for the chat's error details).
    """

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        code: int | None = None,
        type: str | None = None,
        details: Any = None,
        fbtrace_id: str | None = None,
        http_status: int | None = None,
        retryable: bool = False,
    ) -> None:
        message = storable.text(message)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.code = storable.error_code(code)
        # Graph's code when the column cannot hold it (2**40, "131047"): kept in the details.
        self.unusable_code = storable.json_value(code) if self.code is None else None
        self.type = storable.optional_text(type, 255)
        self.details = storable.json_value(details)
        self.fbtrace_id = storable.optional_text(fbtrace_id, 255)
        self.http_status = http_status
        self.retryable = retryable

    @property
    def may_have_been_sent(self) -> bool:
        """Whether WhatsApp may have the message although the send failed: no answer came
        (a read timeout, a connection dropped mid-request). Only a refused connection is
        known not to have reached it, and any answer from Graph is a refusal."""
        if self.http_status is not None:
            return False
        return self.kind == FailureKind.TIMEOUT or self.details != "ConnectionRefusedError"


class Gateway(Protocol):
    def send_message(
        self, payload: dict[str, Any], *, may_write: Callable[[], bool] | None = None
    ) -> dict[str, Any]:
        """Send one Cloud API message payload; return the Cloud API's answer.
        `may_write`, if given, is asked in the calling thread at the last moment before
        the request is written to the channel, at most once; when it answers False
        nothing is written and NotWritten is raised.

        The answer always has `messaging_product`, `contacts` (`[{input, wa_id}]`, or
        empty when the channel gave no usable wa_id) and `messages[{id}]` (plus a
        `message_status` text for templates), each of that type and storable. Raises
        GatewayError.
        """
        ...

    def list_templates(self) -> list[dict[str, Any]]:
        """Every message template of the business account, as Graph describes them."""
        ...

    def create_template(self, template: dict[str, Any]) -> dict[str, Any]:
        """Submit a template (Graph's shape: name, language, category, components) to the
        business account; WhatsApp's `id`, `status` and `category`, as texts. Raises
        GatewayError, ChannelNotConfigured without a business account id."""
        ...

    def edit_template(self, template_id: str, changes: dict[str, Any]) -> str:
        """Change a template's `components` and/or `category` at WhatsApp; the status it
        has then (WhatsApp reviews an edit: PENDING until its webhook says more)."""
        ...

    def delete_template(self, name: str, template_id: str = "") -> None:
        """Delete a template at WhatsApp: by name, and with its id only that language."""
        ...

    def media_info(self, media_id: str) -> dict[str, Any]:
        """Where to download an inbound message's media: `url` (a text), and what the
        channel says of it, `mime_type` and `sha256` (texts, maybe empty) and `file_size`
        (an int or None). Raises GatewayError."""
        ...

    def download_media(self, url: str, *, max_bytes: int, chunk_size: int) -> Iterator[bytes]:
        """The bytes at `url` (from `media_info`), in chunks of at most `chunk_size`,
        never holding the whole file. Raises GatewayError, and MediaTooLarge as soon as
        the channel announces or sends more than `max_bytes`."""
        ...

    def upload_media(self, content: bytes, *, mime_type: str, file_name: str) -> str:
        """Put a file on the channel for a message to send by its id (Graph's
        `POST /{phone-number-id}/media`); the media id. Raises GatewayError."""
        ...


class MediaTooLarge(Exception):
    """The media is larger than its type's limit: it is not downloaded (any further)."""
