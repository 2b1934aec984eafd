"""An IPv6 address that carries an IPv4 address is as public as what it carries: every
form of it is refused at endpoint creation where the IPv4 address itself would be
(docs/security.md)."""

import pytest

from messaging_project.core.public_urls import is_public_address

CARRYING_PRIVATE = {
    "IPv4-mapped": ["::ffff:127.0.0.1", "::ffff:10.0.0.1"],
    "IPv4-translated": ["::ffff:0:127.0.0.1", "::ffff:0:a00:1", "::ffff:0:169.254.169.254"],
    "6to4": ["2002:7f00:1::", "2002:c0a8:101::1"],
    "NAT64": ["64:ff9b::127.0.0.1", "64:ff9b::10.1.2.3"],
    "NAT64 local": ["64:ff9b:1::8.8.8.8"],
    "IPv4-compatible": ["::127.0.0.1", "::10.0.0.1"],
    # Teredo: server 65.54.227.120, client 127.0.0.1 (stored inverted); then a private server.
    "Teredo": ["2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:0:a00:1::"],
}


@pytest.mark.parametrize(
    "address", [address for forms in CARRYING_PRIVATE.values() for address in forms]
)
def test_an_ipv6_address_carrying_a_private_ipv4_address_is_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize(
    "address", ["::ffff:8.8.8.8", "::ffff:0:8.8.8.8", "2002:808:808::", "64:ff9b::8.8.8.8"]
)
def test_an_ipv6_address_carrying_a_public_ipv4_address_is_public(address):
    assert is_public_address(address)


def test_plain_public_ipv6_is_public():
    assert is_public_address("2606:4700:4700::1111")


@pytest.mark.parametrize(
    "host", ["::ffff:0:127.0.0.1", "::ffff:0:10.0.0.1", "2001:0:a00:1::", "::ffff:0:a9fe:a9fe"]
)
def test_an_endpoint_at_such_an_address_is_a_400_on_url(api, settings, host):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    response = api.post("/api/webhooks", {"url": f"http://[{host}]/hook"}, format="json")
    assert response.status_code == 400
    assert "url" in response.json()["errors"]
