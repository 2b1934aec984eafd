"""The client address behind trusted proxies: X-Forwarded-For is believed only from the
addresses in TRUSTED_PROXIES, and the failed-authentication limit counts by it."""

from types import SimpleNamespace

import pytest
from django.test import RequestFactory
from rest_framework.test import APIClient

from messaging_project.api import auth_failures
from messaging_project.core.client_address import client_address

PROXY = "10.0.0.2"


def address(remote, forwarded=None) -> str:
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_address(RequestFactory().get("/", **extra))


def test_without_the_setting_the_peer_is_the_client(settings):
    settings.TRUSTED_PROXIES = []
    assert address(PROXY, "198.51.100.7") == PROXY


def test_a_spoofed_header_from_an_untrusted_address_is_ignored(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    assert address("203.0.113.9", "198.51.100.7") == "203.0.113.9"
    assert address("203.0.113.9", "10.0.0.1") == "203.0.113.9"


def test_behind_a_trusted_proxy_the_forwarded_client_is_the_client(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    assert address(PROXY, "198.51.100.7") == "198.51.100.7"
    # A private client address behind the proxy is kept too.
    assert address(PROXY, "192.168.1.20") == "192.168.1.20"


def test_what_the_client_wrote_left_of_its_own_address_is_not_believed(settings):
    # The proxy appends the address it saw; the client wrote "1.2.3.4" itself.
    settings.TRUSTED_PROXIES = [PROXY]
    assert address(PROXY, "1.2.3.4, 198.51.100.7") == "198.51.100.7"


def test_a_chain_of_trusted_proxies_is_walked_from_the_right(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8", "2001:db8::/32"]
    assert address(PROXY, "1.2.3.4, 198.51.100.7, 10.1.1.1, 10.2.2.2") == "198.51.100.7"
    assert address("2001:db8::1", "2001:db8::5, 198.51.100.8") == "198.51.100.8"
    assert address(PROXY, "[2001:db8:1::9]:443, 10.9.9.9") == "2001:db8:1::9"


def test_a_missing_or_garbage_header_from_a_proxy_leaves_the_proxy(settings):
    settings.TRUSTED_PROXIES = [PROXY]
    assert address(PROXY) == PROXY
    assert address(PROXY, "not an address") == PROXY


def test_a_malformed_setting_stops_the_service(monkeypatch):
    import importlib

    from django.core.exceptions import ImproperlyConfigured

    import messaging_project.settings as module

    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.0/8, proxy.example")
    with pytest.raises(ImproperlyConfigured, match="proxy.example"):
        importlib.reload(module)
    monkeypatch.delenv("TRUSTED_PROXIES")
    importlib.reload(module)


@pytest.fixture
def one_window(monkeypatch):
    """The guesses all in one of the limit's one-minute windows: a run that crossed a
    window's end would find the count started again."""
    monkeypatch.setattr(auth_failures, "time", SimpleNamespace(time=lambda: 1_800_000_000.0))


def bad_guess(remote, forwarded) -> int:
    client = APIClient(REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    client.credentials(HTTP_AUTHORIZATION="Bearer wam_000000000000_" + "x" * 43)
    return client.get("/api/contacts").status_code


@pytest.mark.django_db
def test_behind_a_proxy_one_guesser_does_not_lock_out_the_others(settings, one_window):
    settings.TRUSTED_PROXIES = [PROXY]
    settings.API_AUTH_FAILURE_LIMIT = 3
    guesses = [bad_guess(PROXY, "198.51.100.66") for _ in range(4)]
    assert guesses == [401, 401, 401, 429]
    # Another client behind the same proxy still gets its own budget.
    assert bad_guess(PROXY, "198.51.100.77") == 401
    # The guesser cannot escape by writing another address before its own.
    assert bad_guess(PROXY, "198.51.100.99, 198.51.100.66") == 429


@pytest.mark.django_db
def test_an_untrusted_client_cannot_escape_the_limit_with_a_forged_header(settings, one_window):
    settings.TRUSTED_PROXIES = [PROXY]
    settings.API_AUTH_FAILURE_LIMIT = 2
    statuses = [bad_guess("203.0.113.50", f"198.51.100.{n}") for n in range(3)]
    assert statuses == [401, 401, 429]
