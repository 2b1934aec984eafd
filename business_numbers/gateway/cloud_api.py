"""The WhatsApp Cloud API client: the only code in the service that sends to WhatsApp.

(Over 400 lines: the client, its error mapping and its answer checks are read together.)

Calls go through urllib3 directly, on pools of connections kept alive per origin across
requests and threads (`Route`). A campaign makes one call per message, from hundreds of
threads: requests' layer over urllib3 (a Request prepared, its settings merged, its
adapter found) cost each call more CPU than the call itself, and a worker short of CPU
starts its sends late (docs/performance.md). Every call has a deadline for the whole of
it (connect, send, the answer's last byte: messaging_project/core/deadlines.py), follows
no redirect (the token must not follow one), and every failure (a Graph error object,
another HTTP error, an answer that is not JSON, a timeout, a refused or reset
connection) becomes a GatewayError. The access token goes into the Authorization header
only: never into a URL, a message or a log line.
"""

import functools
import http.client
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import quote, urlencode, urlsplit

import requests
import urllib3
from django.conf import settings
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from business_numbers.gateway import storable
from business_numbers.gateway.base import (
    ChannelNotConfigured,
    FailureKind,
    GatewayError,
    MediaTooLarge,
    NotWritten,
)
from messaging_project.core.deadlines import NETWORK_ERRORS, WatchedConnection, deadline
from messaging_project.core.http_pools import ConnectionStack

logger = logging.getLogger(__name__)

# What the calling thread asks at the last moment before its request is written to the
# socket (send_message's `may_write`): a campaign's message leaves only while its turn
# holds (campaigns/pacing.py), so as little as possible may come between the two.
write_check = threading.local()


# http.client.HTTPConnection's private state: idle, or a request begun.
HTTP_CLIENT_STATE = "_HTTPConnection__state"


class AsksBeforeWriting:
    """A urllib3 connection that asks the thread's `write_check`, once, after it is
    connected and its request's head is built, before any byte of it is written:
    NotWritten when it says no. Asked from `endheaders`, so that between the answer and
    the socket there is only the write: the head's building (headers checked one by one,
    the body framed) comes before, where a pause of the interpreter costs the turn
    nothing.

    A request not written leaves its connection as good as unused: its head is
    forgotten, and the connection is kept for the pool to take back (`KeepsUnwritten`),
    where urllib3 would close it (it closes a connection on any failure of `urlopen`)
    and the next send would open another, a TLS handshake with Graph."""

    def endheaders(self, *args: Any, **kwargs: Any) -> None:
        check = getattr(write_check, "may_write", None)
        if check is not None:
            write_check.may_write = None  # once per send, not again on a redirect or retry
            if getattr(self, "sock", None) is None:
                self.connect()  # type: ignore[attr-defined]  # (HTTPS pools connect before)
            if not check():
                if self.forget_request():
                    write_check.unwritten = self
                raise NotWritten
        super().endheaders(*args, **kwargs)  # type: ignore[misc]

    def forget_request(self) -> bool:
        """http.client's request begun and not sent (its head buffered) forgotten, so
        that the connection takes the next one; False where that state is not as
        http.client has kept it (the connection is then closed, as by urllib3)."""
        if getattr(self, HTTP_CLIENT_STATE, None) != http.client._CS_REQ_STARTED:  # type: ignore[attr-defined]
            return False
        del self._buffer[:]  # type: ignore[attr-defined]
        setattr(self, HTTP_CLIENT_STATE, http.client._CS_IDLE)  # type: ignore[attr-defined]
        return True

    def close(self) -> None:
        if getattr(write_check, "unwritten", None) is self:
            return  # kept open: the pool takes it back
        super().close()  # type: ignore[misc]


class KeepsUnwritten:
    """A urllib3 pool that takes back the connection of a request not written
    (AsksBeforeWriting), for which urllib3, having "closed" it, gives back None."""

    def _put_conn(self, conn: Any) -> None:
        unwritten = getattr(write_check, "unwritten", None)
        if unwritten is not None:
            write_check.unwritten = None
            conn = conn or unwritten
        super()._put_conn(conn)  # type: ignore[misc]


class WrittenHTTPConnection(AsksBeforeWriting, WatchedConnection, HTTPConnection):
    pass


class WrittenHTTPSConnection(AsksBeforeWriting, WatchedConnection, HTTPSConnection):
    pass


class WrittenHTTPConnectionPool(KeepsUnwritten, HTTPConnectionPool):
    ConnectionCls = WrittenHTTPConnection
    QueueCls = ConnectionStack  # type: ignore[assignment]


class WrittenHTTPSConnectionPool(KeepsUnwritten, HTTPSConnectionPool):
    ConnectionCls = WrittenHTTPSConnection
    QueueCls = ConnectionStack  # type: ignore[assignment]


WRITTEN_POOLS: dict[str, type[HTTPConnectionPool]] = {
    "http": WrittenHTTPConnectionPool,
    "https": WrittenHTTPSConnectionPool,
}

# Connections kept open to Graph, per process: as many as its threads may send at once
# (gunicorn's, or a worker's campaign senders': CAMPAIGN_THREADS each, and at most this
# many under way in all: campaigns/sender.py's SendsUnderWay). A send beyond the pool
# would open a connection for itself and close it after, a TCP and TLS handshake per
# message.
POOL_SIZE = max(32, settings.CAMPAIGN_THREADS * settings.CAMPAIGN_SENDERS)


class Route:
    """How this process's calls reach one origin: a pool of connections kept to it, or,
    when the environment names a proxy for it (HTTPS_PROXY, NO_PROXY...), that proxy.
    The environment and the CA bundle (REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, else
    certifi's) are read once per origin, as requests reads them; ~/.netrc never (an
    entry for Graph's host would replace the access token).

    A pool of its own rather than a urllib3 PoolManager: a manager finds the pool under
    a lock on every call, and under the GIL a lock hundreds of sending threads take
    becomes a convoy (messaging_project/core/http_pools.py)."""

    def __init__(self, origin: str) -> None:
        parts = urlsplit(origin)
        ca_certs = (
            os.environ.get("REQUESTS_CA_BUNDLE")
            or os.environ.get("CURL_CA_BUNDLE")
            or requests.utils.DEFAULT_CA_BUNDLE_PATH
        )
        tls: dict[str, Any] = {"ca_certs": ca_certs} if parts.scheme == "https" else {}
        proxy = requests.utils.select_proxy(origin, requests.utils.get_environ_proxies(origin))
        self.through_proxy = bool(proxy)
        self.opener: urllib3.ProxyManager | HTTPConnectionPool
        if proxy:
            self.opener = urllib3.ProxyManager(proxy, maxsize=POOL_SIZE, **tls)
            self.opener.pool_classes_by_scheme = WRITTEN_POOLS  # (the deadlines' sockets)
        else:
            pool = WRITTEN_POOLS.get(parts.scheme)
            try:
                port = parts.port
            except ValueError:
                pool = None
            if pool is None or not parts.hostname:
                raise GatewayError(
                    FailureKind.UNAVAILABLE,
                    "The WhatsApp channel's URL names no http or https host.",
                    type="invalid_response",
                )
            self.opener = pool(parts.hostname, port, maxsize=POOL_SIZE, **tls)

    def open(self, method: str, url: str, **options: Any) -> urllib3.BaseHTTPResponse:
        """One request, no redirect followed and no retry (failures raise)."""
        if not self.through_proxy:
            parts = urlsplit(url)
            url = parts.path + (f"?{parts.query}" if parts.query else "")
        return self.opener.urlopen(method, url, retries=False, redirect=False, **options)


@functools.lru_cache(maxsize=64)  # Graph's origin, and those its media URLs name
def route(origin: str) -> Route:
    return Route(origin)


# A forked child (gunicorn's workers with --preload) opens its own connections rather
# than share the parent's sockets.
os.register_at_fork(after_in_child=route.cache_clear)


def route_for(url: str) -> Route:
    return route(origin_of(url))


CONNECT_TIMEOUT = 5.0  # seconds; the whole call may take up to WHATSAPP_TIMEOUT
TEMPLATE_FIELDS = "id,name,language,status,category,components,quality_score,rejected_reason"
MAX_TEMPLATE_PAGES = 200

# Graph codes that say the token is wrong, expired or lacks a permission.
CREDENTIAL_CODES = {0, 10, 190, *range(200, 300)}
# Graph codes that say "not now": rate limits and temporary outages.
RETRYABLE_CODES = {1, 2, 4, 17, 341, 80007, 130429, 131000, 131016, 131048, 131056, 133004}


# What a message id may be: printable ASCII without spaces, short enough for its column.
MESSAGE_ID = re.compile(r"[!-~]{1,255}")
# WhatsApp's id of a recipient: digits, country code first.
WA_ID = re.compile(r"[0-9]{1,32}")
# An uploaded file's id, as a send by id takes it (the send API's rule).
UPLOADED_MEDIA_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def is_message_id(value: Any) -> bool:
    return isinstance(value, str) and MESSAGE_ID.fullmatch(value) is not None


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def timeouts() -> tuple[float, float]:
    read = float(settings.WHATSAPP_TIMEOUT)
    return min(CONNECT_TIMEOUT, read), read


def graph_error(status: int, body: Any) -> GatewayError:
    """A GatewayError for an HTTP error answer, from Graph's error object when there is one."""
    error = body.get("error") if isinstance(body, dict) else None
    answered = f"The WhatsApp channel answered with HTTP {status}."
    if not isinstance(error, dict):
        return GatewayError(
            FailureKind.CREDENTIALS if status == 401 else FailureKind.UNAVAILABLE,
            answered,
            type="http_error",
            http_status=status,
            retryable=status >= 500 or status == 429,
        )
    code = storable.error_code(error.get("code"))
    # The business management API's refusals (a template's) say what is wrong in
    # `error_user_msg`; their `message` is a bare "Invalid parameter".
    message = error.get("error_user_msg") or error.get("message") or answered
    error_data = error.get("error_data")
    details = error_data.get("details") if isinstance(error_data, dict) else error_data
    if details is None and error.get("error_user_title"):
        details = {
            "error_subcode": error.get("error_subcode"),
            "error_user_title": error.get("error_user_title"),
            "message": error.get("message"),
        }
    if status == 401 or code in CREDENTIAL_CODES:
        kind = FailureKind.CREDENTIALS
    elif status >= 500:
        kind = FailureKind.UNAVAILABLE
    else:
        kind = FailureKind.REFUSED
    return GatewayError(
        kind,
        message,
        code=error.get("code"),  # as Graph gave it: GatewayError keeps an unusable one aside
        type=error.get("type"),
        details=details,
        fbtrace_id=error.get("fbtrace_id"),
        http_status=status,
        retryable=(status >= 500 or status == 429 or code in RETRYABLE_CODES),
    )


def accepted_answer(answer: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """The success answer as the Gateway interface promises it: only the fields the
    service uses, each of its type and storable, so that junk in the others (a
    `"contacts": "abc"`, a NUL, a lone surrogate) cannot break the record or the response.
    `message` is the first of `answer["messages"]`, whose id is already checked."""
    accepted: dict[str, Any] = {"id": message["id"]}
    status = message.get("message_status")
    if isinstance(status, str):
        accepted["message_status"] = storable.text(status, 32)
    contacts = answer.get("contacts")
    contact = contacts[0] if isinstance(contacts, list) and contacts else None
    wa_id = contact.get("wa_id") if isinstance(contact, dict) else None
    return {
        "messaging_product": "whatsapp",
        "contacts": (  # a wa_id is a str only when it came from a dict `contact`
            [{"input": storable.text(cast(dict, contact).get("input") or "", 32), "wa_id": wa_id}]
            if isinstance(wa_id, str) and WA_ID.fullmatch(wa_id)
            else []
        ),
        "messages": [accepted],
    }


def unreadable(status: int) -> GatewayError:
    return GatewayError(
        FailureKind.UNAVAILABLE,
        "The WhatsApp channel's answer could not be understood.",
        type="invalid_response",
        http_status=status,
        retryable=True,
    )


@dataclass(frozen=True)
class CloudApiGateway:
    phone_number_id: str
    access_token: str = field(repr=False)
    business_account_id: str = ""

    def request(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, Any] | None = None,
        payload: dict[str, Any] | None = None,
        form: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One call to Graph, with `params` in its query string and `payload` as its JSON
        body, or `form` as a multipart one: its JSON object, or a GatewayError."""
        headers = {"Authorization": f"Bearer {self.access_token}"}
        body: bytes | None = None
        if payload is not None:
            body = json.dumps(payload, allow_nan=False).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:
            body, headers["Content-Type"] = urllib3.encode_multipart_formdata(form)
        if params:
            url = f"{url}?{urlencode(params)}"
        try:
            # The whole call, its answer read to the last byte, within WHATSAPP_TIMEOUT.
            with deadline(settings.WHATSAPP_TIMEOUT) as bound:
                response = route_for(url).open(
                    method,
                    url,
                    body=body,
                    headers=headers,
                    timeout=bound.timeout(*timeouts()),
                )
        except CALL_ERRORS as error:
            raise call_error(error) from None
        try:
            answer = json.loads(response.data)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python goes
            answer = None
        if response.status >= 400:
            raise graph_error(response.status, answer)
        if not isinstance(answer, dict):
            raise unreadable(response.status)
        return answer

    def send_message(
        self, payload: dict[str, Any], *, may_write: Callable[[], bool] | None = None
    ) -> dict[str, Any]:
        url = f"{settings.WHATSAPP_GRAPH_URL}/{self.phone_number_id}/messages"
        if may_write is not None and route_for(url).through_proxy:
            # A proxy's connections do not ask: asked before the request instead.
            if not may_write():
                raise NotWritten
            may_write = None
        write_check.may_write = may_write
        try:
            answer = self.request("POST", url, payload=payload)
        except GatewayError as error:
            logger.warning(
                "WhatsApp send from phone number id %s failed: %s "
                "(code %s, HTTP %s, fbtrace_id %s)",
                self.phone_number_id,
                error.message,
                error.code,
                error.http_status,
                error.fbtrace_id,
            )
            raise
        finally:
            write_check.may_write = None
        messages = answer.get("messages")
        first = messages[0] if isinstance(messages, list) and messages else None
        if not (isinstance(first, dict) and is_message_id(first.get("id"))):
            logger.warning("WhatsApp answered a send without a message id: %.200r", answer)
            raise GatewayError(
                FailureKind.UNAVAILABLE,
                "The WhatsApp channel's answer carried no message id.",
                type="invalid_response",
                http_status=200,
            )
        return accepted_answer(answer, first)

    def media_info(self, media_id: str) -> dict[str, Any]:
        url = f"{settings.WHATSAPP_GRAPH_URL}/{quote(media_id, safe='')}"
        answer = self.request("GET", url, params={"phone_number_id": self.phone_number_id})
        link = answer.get("url")
        if not (isinstance(link, str) and urlsplit(link).scheme in ("http", "https")):
            raise GatewayError(
                FailureKind.UNAVAILABLE,
                "The WhatsApp channel's answer carried no media URL.",
                type="invalid_response",
                http_status=200,
                retryable=True,
            )
        return {
            "url": link,
            "mime_type": storable.text(answer.get("mime_type") or "", 255),
            "sha256": storable.text(answer.get("sha256") or "", 128),
            "file_size": file_size(answer.get("file_size")),
        }

    def download_media(self, url: str, *, max_bytes: int, chunk_size: int) -> Iterator[bytes]:
        if not token_may_go_to(url):
            raise GatewayError(
                FailureKind.UNAVAILABLE,
                "The WhatsApp channel's media URL is not https: the access token stays here.",
                type="invalid_response",
            )
        headers = {"Authorization": f"Bearer {self.access_token}"}
        try:
            # The whole download, to its last byte, within MEDIA_DOWNLOAD_TIMEOUT.
            with deadline(settings.MEDIA_DOWNLOAD_TIMEOUT) as bound:
                response = route_for(url).open(
                    "GET",
                    url,
                    headers=headers,
                    timeout=bound.timeout(*timeouts()),
                    preload_content=False,  # read chunk by chunk below, never all at once
                )
                try:
                    yield from checked_chunks(response, max_bytes=max_bytes, chunk_size=chunk_size)
                    response.release_conn()  # read to its end: the connection serves again
                finally:
                    response.close()  # (not read to its end: the connection is dropped)
        except CALL_ERRORS as error:
            raise call_error(error) from None

    def upload_media(self, content: bytes, *, mime_type: str, file_name: str) -> str:
        url = f"{settings.WHATSAPP_GRAPH_URL}/{self.phone_number_id}/media"
        answer = self.request(
            "POST",
            url,
            form={
                "messaging_product": "whatsapp",
                "type": mime_type,
                "file": (file_name, content, mime_type),
            },
        )
        media_id = answer.get("id")
        if not (isinstance(media_id, str) and UPLOADED_MEDIA_ID.fullmatch(media_id)):
            raise GatewayError(
                FailureKind.UNAVAILABLE,
                "The WhatsApp channel's answer carried no media id.",
                type="invalid_response",
                http_status=200,
            )
        return media_id

    def list_templates(self) -> list[dict[str, Any]]:
        if not self.business_account_id:
            raise ChannelNotConfigured(
                "The organization has no WhatsApp business account id; "
                "give it one with configure_channel --business-account-id."
            )
        base = settings.WHATSAPP_GRAPH_URL
        url = f"{base}/{self.business_account_id}/message_templates"
        params: dict[str, Any] | None = {"fields": TEMPLATE_FIELDS, "limit": 100}
        templates: list[dict[str, Any]] = []
        for _ in range(MAX_TEMPLATE_PAGES):
            answer = self.request("GET", url, params=params)
            data = answer.get("data")
            if not isinstance(data, list):
                raise GatewayError(
                    FailureKind.UNAVAILABLE,
                    "The WhatsApp channel's template list could not be understood.",
                    type="invalid_response",
                )
            templates.extend(item for item in data if isinstance(item, dict))
            url = (answer.get("paging") or {}).get("next") or ""
            if not url:
                return templates
            if not same_origin(url, base):
                # Following it would hand our access token to another host.
                raise GatewayError(
                    FailureKind.UNAVAILABLE,
                    "The WhatsApp channel's next page points to another host.",
                    type="invalid_response",
                )
            params = None  # the next URL carries every parameter already
        raise GatewayError(
            FailureKind.UNAVAILABLE,
            f"The WhatsApp channel's template list runs past {MAX_TEMPLATE_PAGES} pages.",
            type="invalid_response",
        )

    # Templates written here: the business management API -----------------------------

    def templates_url(self) -> str:
        if not self.business_account_id:
            raise ChannelNotConfigured(
                "The number has no WhatsApp business account id; give it one "
                "(PATCH /api/numbers/{uuid} business_account_id) to write templates."
            )
        return f"{settings.WHATSAPP_GRAPH_URL}/{self.business_account_id}/message_templates"

    def create_template(self, template: dict[str, Any]) -> dict[str, Any]:
        answer = self.request("POST", self.templates_url(), payload=template)
        template_id = answer.get("id")
        if not isinstance(template_id, str | int) or not str(template_id).strip():
            raise GatewayError(
                FailureKind.UNAVAILABLE,
                "The WhatsApp channel's answer carried no template id.",
                type="invalid_response",
                http_status=200,
            )
        return {
            "id": storable.text(str(template_id), 64),
            "status": storable.text(str(answer.get("status") or ""), 32),
            "category": storable.text(str(answer.get("category") or ""), 32),
        }

    def edit_template(self, template_id: str, changes: dict[str, Any]) -> str:
        self.templates_url()  # the same account check as the other template calls
        url = f"{settings.WHATSAPP_GRAPH_URL}/{quote(template_id, safe='')}"
        self.request("POST", url, payload=changes)
        return "PENDING"  # WhatsApp reviews the edit; its webhook tells the outcome

    def delete_template(self, name: str, template_id: str = "") -> None:
        params = {"name": name}
        if template_id:
            params["hsm_id"] = template_id  # this one language only, not every language
        self.request("DELETE", self.templates_url(), params=params)


def checked_chunks(response: urllib3.BaseHTTPResponse, *, max_bytes: int, chunk_size: int):
    """A media download's body, chunk by chunk, once its status and size are fine."""
    if response.status != 200:
        # An expired URL is a 4xx too: a new look-up gives a new one, so retry.
        raise GatewayError(
            FailureKind.UNAVAILABLE,
            f"The WhatsApp channel's media download answered with HTTP {response.status}.",
            type="http_error",
            http_status=response.status,
            retryable=True,
        )
    announced = file_size(response.headers.get("Content-Length"))
    if announced is not None and announced > max_bytes:
        raise MediaTooLarge(f"{announced} bytes announced, at most {max_bytes} allowed")
    received = 0
    for chunk in response.stream(chunk_size):
        received += len(chunk)
        if received > max_bytes:
            raise MediaTooLarge(f"more than {max_bytes} bytes sent")
        yield chunk


# What a call that got no (whole) answer raises, and the ValueError of a head the HTTP
# client would not write.
CALL_ERRORS = (*NETWORK_ERRORS, ValueError)


def call_error(error: Exception) -> GatewayError:
    if isinstance(error, ValueError) and not isinstance(error, NETWORK_ERRORS):
        return unsendable(error)  # refused before a byte left: a line break in the token
    return network_error(error)


def network_error(error: Exception) -> GatewayError:
    """No answer in time, or none at all: refused or reset connections, TLS failures,
    broken or undecodable bodies."""
    # (urllib3's NewConnectionError is a ConnectTimeoutError too: a refused connection.)
    timed_out = isinstance(error, requests.Timeout | urllib3.exceptions.TimeoutError | TimeoutError)
    if timed_out and not isinstance(error, urllib3.exceptions.NewConnectionError):
        return GatewayError(
            FailureKind.TIMEOUT,
            "The WhatsApp channel did not answer in time.",
            type="timeout",
            retryable=True,
        )
    return GatewayError(
        FailureKind.UNAVAILABLE,
        "The WhatsApp channel could not be reached.",
        type="connection_error",
        details=root_cause(error),
        retryable=True,
    )


def unsendable(error: ValueError) -> GatewayError:
    """A request the HTTP client would not write (a header or URL with a control
    character: the number's token or its phone number id): nothing was sent."""
    return GatewayError(
        FailureKind.UNAVAILABLE,
        "The request to the WhatsApp channel could not be written from the number's settings.",
        type="invalid_request",
        details=type(error).__name__,
    )


def file_size(value: Any) -> int | None:
    """Graph's `file_size` (a number, or digits in a string), or None."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def token_may_go_to(url: str) -> bool:
    """The access token travels over https only, or to Graph's own origin (the stand-in
    the tests and the bench run on loopback speaks http)."""
    return urlsplit(url).scheme == "https" or same_origin(url, settings.WHATSAPP_GRAPH_URL)


def root_cause(error: BaseException) -> str:
    """The innermost error's name (`ConnectionResetError`, ...): what went wrong, without URLs."""
    for _ in range(10):
        inner = error.__cause__ or next(
            (arg for arg in error.args if isinstance(arg, BaseException)), None
        )
        if inner is None:
            break
        error = inner
    return type(error).__name__


def same_origin(url: str, base: str) -> bool:
    one, other = urlsplit(url), urlsplit(base)
    return (one.scheme, one.netloc) == (other.scheme, other.netloc)
