"""The rule for URLs the service itself fetches or posts to (event webhooks, media).

A client names the URL, so without a rule it could make the service reach what only the
service can reach: the loopback, the private network, the cloud's metadata address. Two
checks keep it out:

- `url_problem()` when the URL is given (a 400 naming the field): http(s) only; a host
  written as an address (`127.0.0.1`, `[::1]`, `2130706433`) must be public, and
  `localhost` names are refused. No DNS look-up: a server without outbound DNS can
  still register URLs, and what a name resolves to at input time proves nothing later.
- `request_public()` when the request is made: each address about to be connected to
  is checked, after DNS, so a name that resolves to a private address (now, or after
  DNS rebinding) is refused then.

An IPv6 address that carries an IPv4 address (`::ffff:a.b.c.d`, the deprecated
`::a.b.c.d`, NAT64's `64:ff9b::/96`, 6to4's `2002::/16`) counts as that IPv4 address:
`[::127.0.0.1]`, `[64:ff9b::7f00:1]` and `[2002:7f00:1::]` are loopback.

`WEBHOOK_ALLOW_PRIVATE_URLS=true` lifts the address rule (development and tests, whose
receivers listen on loopback); the scheme rule stays.
"""

import ipaddress
import math
import os
import socket
import threading
import weakref
from typing import NamedTuple
from urllib.parse import urlsplit

import pycurl
import requests
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_noop

from messaging_project.core.deadlines import Deadline, DeadlineExceeded, watch

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


class RequestFailed(OSError):
    """No answer, or not a whole one: libcurl's account of why (refused, reset, TLS, a
    name that does not resolve), with the system's where it has one."""


class PublicAnswer(NamedTuple):
    status: int
    start: bytes  # the answer's first bytes, as many as the caller keeps


# Idle connections each thread keeps, to any origins (libcurl closes the longest idle
# one past it, and any idle for two minutes).
CONNECTIONS_KEPT = 8


class Client:
    """One thread's libcurl handle, and the connections it keeps alive. libcurl's cache
    of connections shared between handles is not safe for handles in use by several
    threads at once (CURL_LOCK_DATA_CONNECT's documentation), so each thread keeps its
    own, one an origin it posts to, up to CONNECTIONS_KEPT. The DNS answers are shared,
    which is safe."""

    def __init__(self, dns: pycurl.CurlShare) -> None:
        # Which of libcurl's descriptors each connection is, by its two ends (local
        # address and port, peer and port), for the deadline's cut (deadlines.py):
        # libcurl names a connection's ends before each request on it, and its
        # descriptor only when it makes the socket. A descriptor given to a new
        # connection was closed with its old one, whose entry goes then.
        self.connections: dict[tuple, int] = {}
        self.ends: dict[int, tuple] = {}
        handle = self.handle = pycurl.Curl()
        handle.setopt(pycurl.SHARE, dns)
        handle.setopt(pycurl.NOSIGNAL, 1)  # threads: no SIGALRM for DNS timeouts
        handle.setopt(pycurl.PROXY, "")  # the environment's proxies are not read
        handle.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        handle.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1)
        handle.setopt(pycurl.CAINFO, requests.utils.DEFAULT_CA_BUNDLE_PATH)
        handle.setopt(pycurl.MAXCONNECTS, CONNECTIONS_KEPT)
        handle.setopt(pycurl.OPENSOCKETFUNCTION, self.open_socket)
        handle.setopt(pycurl.SOCKOPTFUNCTION, self.socket_made)
        handle.setopt(pycurl.PREREQFUNCTION, self.before_sending)
        handle.setopt(pycurl.WRITEFUNCTION, self.write)
        self.refused = ""
        self.made: dict[int, socket.socket] = {}  # the request's new sockets: our copies
        self.watched: list[socket.socket] = []  # the kept connection's copy, if any
        self.kept = bytearray()
        self.keep = self.read = self.read_limit = 0

    def open_socket(self, purpose: int, address: tuple) -> socket.socket | int:
        """The socket for an address libcurl is about to connect to (libcurl takes a
        copy), or none when it is not public: libcurl then tries the name's next
        address, else fails."""
        family, kind, protocol, peer = address
        if not private_urls_allowed() and not is_public_address(peer[0]):
            self.refused = peer[0]
            return pycurl.SOCKET_BAD
        return socket.socket(family, kind, protocol)

    def socket_made(self, descriptor: int, purpose: int) -> int:
        """A socket libcurl made for this request: a copy of its descriptor is cut at
        the deadline, its connect included."""
        copy = self.made[descriptor] = socket.socket(fileno=os.dup(descriptor))
        watch(copy)
        return pycurl.SOCKOPT_OK

    def before_sending(self, peer: str, local: str, peer_port: int, local_port: int) -> int:
        """The connection about to carry the request: a kept one is cut at this
        request's deadline too, through a copy of its descriptor taken now (libcurl
        holds the connection for this request: the descriptor is its)."""
        ends = (local, local_port, peer, peer_port)
        for descriptor, copy in self.made.items():
            if copy.getsockname()[:2] == ends[:2]:
                self.connections.pop(self.ends.get(descriptor, ()), None)
                self.connections[ends], self.ends[descriptor] = descriptor, ends
                return pycurl.PREREQFUNC_OK
        kept = self.connections.get(ends)
        if kept is not None:
            copy = socket.socket(fileno=os.dup(kept))
            self.watched.append(copy)
            watch(copy)
        return pycurl.PREREQFUNC_OK

    def write(self, chunk: bytes) -> int | None:
        if len(self.kept) < self.keep:
            self.kept += chunk[: self.keep - len(self.kept)]
        self.read += len(chunk)
        # Past the limit, a count that is not the chunk's ends the call, and libcurl
        # closes the connection rather than keep what is left of the answer on it.
        return 0 if self.read >= self.read_limit else None

    def request(
        self,
        url: str,
        headers: list[str],
        body: bytes | None,
        bound: Deadline,
        keep: int,
        read_limit: int,
    ) -> PublicAnswer:
        handle = self.handle
        self.refused = ""
        self.kept, self.keep, self.read, self.read_limit = bytearray(), keep, 0, read_limit
        handle.setopt(pycurl.URL, url)
        if body is None:
            handle.setopt(pycurl.HTTPGET, 1)
        else:
            handle.setopt(pycurl.POSTFIELDS, body)
        handle.setopt(pycurl.HTTPHEADER, headers)
        # Whole milliseconds, rounded up: libcurl ends the call at the deadline itself;
        # the watchdog's cut is for a deadline brought forward (the worker stopping).
        left = max(1, math.ceil(bound.remaining() * 1000))
        handle.setopt(pycurl.TIMEOUT_MS, left)
        handle.setopt(pycurl.CONNECTTIMEOUT_MS, left)
        try:
            handle.perform()
        except pycurl.error as error:
            code = error.args[0] if error.args else None
            if self.refused:
                raise PrivateAddressRefused(
                    f"Refused to connect to {self.refused}: not a public address."
                ) from None
            if code == pycurl.E_OPERATION_TIMEDOUT or bound.expired:
                bound.expired = bound.expired or bound.why()
                raise DeadlineExceeded(bound.expired) from None
            if code != pycurl.E_WRITE_ERROR or self.read < read_limit:
                errno = handle.getinfo(pycurl.OS_ERRNO)
                reason = f" ({os.strerror(errno)})" if errno else ""
                raise RequestFailed(f"{error.args[-1]}{reason}") from None
        finally:
            # The copies only: libcurl's descriptors stay open while it keeps them.
            for copy in (*self.made.values(), *self.watched):
                copy.close()
            self.made, self.watched = {}, []
        return PublicAnswer(handle.getinfo(pycurl.RESPONSE_CODE), bytes(self.kept))


def dns_share() -> pycurl.CurlShare:
    shared = pycurl.CurlShare()
    shared.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_DNS)
    return shared


dns = dns_share()
clients = threading.local()  # each thread's Client, as `clients.own`
every_client: "weakref.WeakSet[Client]" = weakref.WeakSet()
# Across a fork, every thread's Client: a child never cleans its parent's handles up,
# where libcurl would close (and end the TLS of) connections the parent still uses.
inherited: list[Client] = []


def client() -> Client:
    own = getattr(clients, "own", None)
    if own is None:
        own = clients.own = Client(dns)
        every_client.add(own)
    return own


def forked() -> None:
    """A forked child opens its own connections rather than use its parent's sockets."""
    global dns, clients
    dns, clients = dns_share(), threading.local()


os.register_at_fork(
    before=lambda: inherited.extend(every_client),
    after_in_parent=inherited.clear,
    after_in_child=forked,
)


def request_public(
    url: str,
    *,
    headers: dict[str, str],
    bound: Deadline,
    body: bytes | None = None,
    keep: int,
    read_limit: int,
) -> PublicAnswer:
    """A POST of `body`, or a GET without one, to a public address (the rule above), on
    the connections the thread keeps alive: no redirect followed, no retry, all of it
    within `bound` (deadlines.deadline). The answer is read to its end or to
    `read_limit` bytes, whichever comes first (past the limit the connection is
    closed), and its first `keep` bytes returned. A URL's user and password go as Basic
    authentication, as browsers and requests send them.

    Raises PrivateAddressRefused (no public address to connect to), DeadlineExceeded
    (`bound` passed, or cut short), RequestFailed (no whole answer).

    libcurl (pycurl) builds the request and reads the answer in C; through urllib3, in
    Python, they were half of a delivering worker's CPU (docs/events.md)."""
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        scheme = ""
    if scheme not in ("http", "https"):
        raise RequestFailed(f"Not an http(s) URL: {url[:200]}")
    lines = [f"{name}: {value}" for name, value in headers.items()]
    lines.append("Expect:")  # the body goes at once, not after a 100 Continue
    return client().request(url, lines, body, bound, keep, read_limit)
