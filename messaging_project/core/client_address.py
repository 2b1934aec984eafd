"""The client's address: the one place that decides it (the failed-authentication limit,
the request log and the admin's log lines all ask here).

Without TRUSTED_PROXIES it is the connection's peer (REMOTE_ADDR), as gunicorn gives it.
With it, and only when the peer is one of those proxies, X-Forwarded-For is believed:
parsed by django-ipware, and read from the right, past every trusted proxy, to the
first address that is not one. Anything left of that was written by the client and
may be a lie, so a spoofed header from an untrusted address changes nothing.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings
from ipware import get_client_ip
from python_ipware.modern.parsers import parse_ip, split_proxy_chain

FORWARDED_FOR = "HTTP_X_FORWARDED_FOR"


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def is_trusted_proxy(address) -> bool:
    entries = tuple(getattr(settings, "TRUSTED_PROXIES", ()))
    if not entries or address is None:
        return False
    if isinstance(address, str):
        address = parse_ip(address)
        if address is None:
            return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return any(
        address.version == network.version and address in network for network in _networks(entries)
    )


def client_address(request) -> str:
    """The address the request came from, as a string ('' when there is none)."""
    peer = request.META.get("REMOTE_ADDR") or ""
    if not is_trusted_proxy(peer):
        return peer
    chain = split_proxy_chain(request.META.get(FORWARDED_FOR), False) or []
    # Our proxies at the right end of the chain, after the client; the whole chain being
    # ours leaves its first entry.
    proxies = 0
    while proxies < len(chain) - 1 and is_trusted_proxy(chain[-1 - proxies]):
        proxies += 1
    address, _ = get_client_ip(
        request,
        proxy_count=proxies,
        request_header_order=[FORWARDED_FOR],
        strict=False,
    )
    return address or peer
