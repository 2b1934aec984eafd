"""The rule for URLs the service itself fetches or posts to (event webhooks, media).

A client names the URL, so without a rule it could make the service reach what only the
service can reach: the loopback, the private network, the cloud's metadata address. Two
checks keep it out:

- `url_problem()` when the URL is given (a 400 naming the field): http(s) only, and every
  address the host resolves to must be public.
- `public_session()` when the request is made: the address actually connected to is
  checked again, so a name that resolved to a public address at input time and to a
  private one now (DNS rebinding) is refused all the same.

`WEBHOOK_ALLOW_PRIVATE_URLS=true` lifts the address rule (development and tests, whose
receivers listen on loopback); the scheme rule stays.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_noop
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from messaging_project.core.deadlines import WatchedConnection

MAX_URL_LENGTH = 2048


class PrivateAddressRefused(Exception):
    """The connection would have reached an address that is not public."""


def private_urls_allowed() -> bool:
    return settings.WEBHOOK_ALLOW_PRIVATE_URLS


def is_public_address(address: str) -> bool:
    """Whether `address` is on the public internet: not loopback, private, link-local,
    multicast, reserved or unspecified (an IPv4 address written as IPv6 counts as itself)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def url_problem(url: str, *, https_only: bool = False) -> str | None:
    """Why the service may not send a request to `url`, or None.

    With `https_only`, plain http is refused too, except where private URLs are allowed
    (a development receiver on loopback speaks http)."""
    error = url_error(url, https_only=https_only)
    return None if error is None else error.messages[0]


def url_error(url: str, *, https_only: bool = False) -> ValidationError | None:
    """`url_problem` as a ValidationError, its message marked for translation and its
    values apart, so that the admin can show it in the staff member's language."""

    def problem(message: str, **params) -> ValidationError:
        return ValidationError(message, params=params or None)

    if len(url) > MAX_URL_LENGTH:
        return problem(
            gettext_noop("Ensure this field has no more than %(limit)d characters."),
            limit=MAX_URL_LENGTH,
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return problem(gettext_noop("Enter a valid URL."))
    allowed = {"https"} if https_only and not private_urls_allowed() else {"http", "https"}
    if parts.scheme.lower() not in allowed:
        if allowed == {"https"}:
            return problem(gettext_noop("The URL must start with https://."))
        return problem(gettext_noop("The URL must start with http:// or https://."))
    if not parts.hostname:
        return problem(gettext_noop("Enter a valid URL."))
    if private_urls_allowed():
        return None
    try:
        found = socket.getaddrinfo(parts.hostname, port or 443, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return problem(
            gettext_noop("The host %(host)r could not be resolved."), host=parts.hostname
        )
    for *_, sockaddr in found:
        if not is_public_address(sockaddr[0]):
            return problem(
                gettext_noop("The URL must not point at a loopback, private or link-local address.")
            )
    return None


def refuse_private_peer(sock: socket.socket) -> None:
    if private_urls_allowed():
        return
    peer = sock.getpeername()[0]
    if not is_public_address(peer):
        sock.close()
        raise PrivateAddressRefused(f"Refused to connect to {peer}: not a public address.")


class PublicHTTPConnection(WatchedConnection, HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        refuse_private_peer(sock)
        return sock


class PublicHTTPSConnection(WatchedConnection, HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        refuse_private_peer(sock)
        return sock


class PublicHTTPPool(HTTPConnectionPool):
    ConnectionCls = PublicHTTPConnection


class PublicHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = PublicHTTPSConnection


class PublicOnlyAdapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": PublicHTTPPool, "https": PublicHTTPSPool}


def public_session() -> requests.Session:
    """A requests session that connects only to public addresses (checked on the socket,
    after DNS) and ignores proxy settings from the environment. Callers still pass
    timeouts and `allow_redirects=False`. `PrivateAddressRefused` comes out of the call
    as it is, not wrapped in a requests exception."""
    session = requests.Session()
    session.trust_env = False  # a proxy would make the peer check meaningless
    adapter = PublicOnlyAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
