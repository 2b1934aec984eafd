"""The rule for URLs the service itself fetches or posts to (event webhooks, media).

A client names the URL, so without a rule it could make the service reach what only the
service can reach: the loopback, the private network, the cloud's metadata address. Two
checks keep it out:

- `url_problem()` when the URL is given (a 400 naming the field): http(s) only; a host
  written as an address (`127.0.0.1`, `[::1]`, `2130706433`) must be public, and
  `localhost` names are refused. No DNS look-up: a server without outbound DNS can
  still register URLs, and what a name resolves to at input time proves nothing later.
- `open_public()` when the request is made: the address actually connected to is
  checked, after DNS, so a name that resolves to a private address (now, or after DNS
  rebinding) is refused then.

An IPv6 address that carries an IPv4 address (`::ffff:a.b.c.d`, the deprecated
`::a.b.c.d`, NAT64's `64:ff9b::/96`, 6to4's `2002::/16`) counts as that IPv4 address:
`[::127.0.0.1]`, `[64:ff9b::7f00:1]` and `[2002:7f00:1::]` are loopback.

`WEBHOOK_ALLOW_PRIVATE_URLS=true` lifts the address rule (development and tests, whose
receivers listen on loopback); the scheme rule stays.
"""

import functools
import ipaddress
import os
import socket
from typing import Any
from urllib.parse import unquote, urlsplit

import requests
import urllib3
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_noop
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util import make_headers, parse_url

from messaging_project.core.deadlines import WatchedConnection
from messaging_project.core.http_pools import ConnectionStack

MAX_URL_LENGTH = 2048


class PrivateAddressRefused(Exception):
    """The connection would have reached an address that is not public."""


def private_urls_allowed() -> bool:
    return settings.WEBHOOK_ALLOW_PRIVATE_URLS


# NAT64: the well-known prefix carries an IPv4 address in its last 32 bits; the local-use
# prefix reaches whatever the local translator decides, so it is never public.
NAT64 = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
# Names that are loopback whatever DNS says (RFC 6761).
LOOPBACK_NAMES = ("localhost", ".localhost", "localhost.", ".localhost.")


# IPv4-translated addresses (RFC 2765's SIIT): ::ffff:0:a.b.c.d.
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries, for each form that carries one:
    IPv4-mapped, IPv4-translated, 6to4, NAT64, IPv4-compatible, and Teredo (its server
    and its client, both of which the packet may reach)."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    # NAT64, IPv4-translated, or IPv4-compatible ::a.b.c.d
    if ip in NAT64 or ip in IPV4_TRANSLATED or int(ip) >> 32 == 0:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    return []


def is_public_address(address: str) -> bool:
    """Whether `address` is on the public internet: not loopback, private, link-local,
    multicast, reserved or unspecified (an IPv4 address carried in IPv6 counts as itself,
    and every one it carries must be public; docs/security.md)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    if ip.version == 6:
        if ip in NAT64_LOCAL:
            return False
        inner = embedded_ipv4(ip)
        if not all(one.is_global and not one.is_multicast for one in inner):
            return False
        if inner and ip.teredo is None:
            return True
    return ip.is_global and not ip.is_multicast


def literal_address(host: str) -> str | None:
    """The address a host written as one stands for, without DNS: `10.0.0.1`, `::1`, and
    the forms the C resolver reads as IPv4 (`2130706433`, `0x7f000001`, `127.1`)."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefx." for c in host.lower()):
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            return None
    return None


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
        parts.port  # noqa: B018 - raises on a port out of range
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
    host = parts.hostname.lower()
    address = literal_address(host)
    if host.endswith(LOOPBACK_NAMES) or (address is not None and not is_public_address(address)):
        return problem(
            gettext_noop("The URL must not point at a loopback, private or link-local address.")
        )
    return None  # a name: its addresses are checked when the request is made


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
    QueueCls = ConnectionStack  # type: ignore[assignment]


class PublicHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = PublicHTTPSConnection
    QueueCls = ConnectionStack  # type: ignore[assignment]


# Connections kept alive to one origin, for all of a process's threads: as many as the
# worker has event POSTs under way at once (events/delivery.py's POST_SLOTS).
CONNECTIONS_PER_ORIGIN = 32
# Origins whose connections a process keeps; the least recently used one's are closed.
ORIGINS_KEPT = 256


@functools.lru_cache(maxsize=ORIGINS_KEPT)
def public_pool(scheme: str, host: str, port: int | None) -> HTTPConnectionPool:
    """The connections kept to one origin. TLS is checked against certifi's CAs, as
    requests checks them (the environment's proxies and CA bundle are not read: a proxy
    would make the peer check meaningless)."""
    if scheme == "https":
        return PublicHTTPSPool(
            host,
            port,
            maxsize=CONNECTIONS_PER_ORIGIN,
            ca_certs=requests.utils.DEFAULT_CA_BUNDLE_PATH,
        )
    return PublicHTTPPool(host, port, maxsize=CONNECTIONS_PER_ORIGIN)


# A forked child opens its own connections rather than share its parent's sockets.
os.register_at_fork(after_in_child=public_pool.cache_clear)


def open_public(
    method: str, url: str, *, headers: dict[str, str], body: bytes | None = None, **options: Any
) -> urllib3.BaseHTTPResponse:
    """One request to a public address (the rule above), on the connections kept to its
    origin: no redirect followed, no retry, the answer not read (`preload_content`
    False: read it, then `release_conn()`, or `close()` what is left unread). A URL's
    user and password go as Basic authentication, as browsers and requests send them.
    Failures are urllib3's errors and the socket's; `PrivateAddressRefused` comes out as
    it is. urllib3 directly: requests' layer over it (a Request prepared and merged per
    call) cost a delivery more of the worker's CPU than the POST itself."""
    parts = parse_url(url)
    if parts.scheme not in ("http", "https") or not parts.host:
        raise urllib3.exceptions.LocationValueError(f"Not an http(s) URL: {url[:200]}")
    if parts.auth:
        headers = {**headers, **make_headers(basic_auth=unquote(parts.auth))}
    pool = public_pool(parts.scheme, parts.host, parts.port)
    return pool.urlopen(
        method,
        parts.request_uri,
        body=body,
        headers=headers,
        retries=False,
        redirect=False,
        preload_content=False,
        **options,
    )
