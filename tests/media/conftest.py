"""Fixtures for media: media URLs on hosts that resolve to a public address without DNS,
and the sandbox's outbox emptied around each test."""

import socket

import pytest

from business_numbers.gateway import sandbox
from tests.admin.conftest import (  # noqa: F401 - the admin fixtures
    admin_a,
    fast_passwords,
    staff_a,
    staff_b,
)
from tests.tasks.conftest import cloud_webhook_org  # noqa: F401 - a Cloud API webhook org

PUBLIC_ADDRESS = "93.184.215.14"


@pytest.fixture(autouse=True)
def empty_outbox():
    sandbox.clear_outbox()
    yield
    sandbox.clear_outbox()


@pytest.fixture(autouse=True)
def public_dns(monkeypatch, settings):
    """`*.example.com` resolves to a public address, anything else as the system says:
    the URL rule runs for real (private URLs refused), without the network."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if isinstance(host, str) and host.endswith("example.com"):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC_ADDRESS, port or 443))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr("messaging_project.core.public_urls.socket.getaddrinfo", getaddrinfo)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Django's storage in a directory of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT
