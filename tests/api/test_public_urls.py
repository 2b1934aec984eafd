"""The rule for URLs the service posts to or fetches: public addresses only, checked
when the URL is given and again on the connected socket."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from messaging_project.core.public_urls import (
    PrivateAddressRefused,
    is_public_address,
    public_session,
    url_problem,
)


@pytest.fixture
def private_urls_refused(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False


@pytest.fixture
def private_urls_allowed(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True


@pytest.fixture
def loopback_receiver():
    class Answer(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",  # the cloud's metadata service
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "ff02::1",
    ],
)
def test_addresses_that_are_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "157.240.1.1", "2a03:2880:f003:c07:face:b00c::2"])
def test_public_addresses(address):
    assert is_public_address(address)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://localhost:8000/hook",
        "https://10.0.0.5/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://0x7f000001/hook",  # 127.0.0.1 spelled as one hex number
        "http://2130706433/hook",  # and as one decimal number
    ],
)
def test_urls_that_reach_private_addresses_are_refused(private_urls_refused, url):
    assert "private" in url_problem(url)


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/x", "file:///etc/passwd", "javascript:alert(1)", "example.com/hook", ""],
)
def test_other_schemes_are_refused(private_urls_refused, url):
    assert url_problem(url) is not None


@pytest.mark.parametrize("url", ["http://[::1/hook", "http://host:99999/hook", "http:///hook"])
def test_malformed_urls_are_refused_not_raised(private_urls_refused, url):
    assert url_problem(url) is not None


def test_a_host_that_does_not_resolve_is_refused(private_urls_refused):
    assert "could not be resolved" in url_problem("https://no-such-host.invalid/hook")


def test_https_only_refuses_http_unless_private_urls_are_allowed(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    assert "https://" in url_problem("http://127.0.0.1/a.png", https_only=True)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    assert url_problem("http://127.0.0.1/a.png", https_only=True) is None


def test_private_urls_pass_when_allowed(private_urls_allowed):
    assert url_problem("http://127.0.0.1:8000/hook") is None
    assert url_problem("ftp://127.0.0.1/hook") is not None


def test_the_session_refuses_a_private_peer_after_dns(private_urls_refused, loopback_receiver):
    # The check on the socket is what stops DNS rebinding: whatever the name resolved to
    # when the URL was given, the address connected to now is what counts.
    with pytest.raises(PrivateAddressRefused):
        public_session().get(loopback_receiver, timeout=2, allow_redirects=False)


def test_the_session_connects_when_private_urls_are_allowed(
    private_urls_allowed, loopback_receiver
):
    response = public_session().get(loopback_receiver, timeout=2, allow_redirects=False)
    assert response.status_code == 204


def test_the_session_ignores_proxies_from_the_environment(
    monkeypatch, private_urls_allowed, loopback_receiver
):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens on the discard port
    response = public_session().get(loopback_receiver, timeout=2, allow_redirects=False)
    assert response.status_code == 204


def test_a_refused_connection_is_not_a_requests_error(private_urls_refused, loopback_receiver):
    # Callers tell "refused by the rule" (permanent) from "network trouble" (retry).
    with pytest.raises(PrivateAddressRefused) as refused:
        public_session().get(loopback_receiver, timeout=2)
    assert not isinstance(refused.value, requests.RequestException)
