"""The rule for URLs the service posts to or fetches: public addresses only, checked
when the URL is given and again on the connected socket."""

import base64
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from devtools.webhook_receiver import WebhookReceiver
from messaging_project.core.deadlines import DeadlineExceeded, deadline
from messaging_project.core.public_urls import (
    PrivateAddressRefused,
    PublicAnswer,
    RequestFailed,
    is_public_address,
    request_public,
    url_problem,
)


@pytest.fixture
def private_urls_refused(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False


@pytest.fixture
def private_urls_allowed(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True


def get(url: str) -> PublicAnswer:
    with deadline(2) as bound:
        return request_public(url, headers={}, bound=bound, keep=1024, read_limit=65536)


class SeeingServer(ThreadingHTTPServer):
    seen: list[tuple]  # each server's own, set by loopback_server


@pytest.fixture
def loopback_server():
    """A server on loopback that keeps its connections alive; `seen` holds each
    request's (client address, Authorization header)."""

    class Answer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            server.seen.append((self.client_address, self.headers.get("Authorization")))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = SeeingServer(("127.0.0.1", 0), Answer)
    server.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def loopback_receiver(loopback_server):
    return f"http://127.0.0.1:{loopback_server.server_address[1]}/hook"


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
        # IPv6 forms that carry a private or loopback IPv4 address.
        "::127.0.0.1",
        "::10.0.0.1",
        "::169.254.169.254",
        "64:ff9b::7f00:1",
        "64:ff9b::a00:1",
        "64:ff9b::169.254.169.254",
        "64:ff9b:1::808:808",  # NAT64's local-use prefix: never public
        "2002:7f00:1::",
        "2002:a00:1::1",
        "2002:c0a8:101::",
        "::",
    ],
)
def test_addresses_that_are_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "157.240.1.1",
        "2a03:2880:f003:c07:face:b00c::2",
        "64:ff9b::808:808",  # NAT64 to a public address
        "2002:808:808::1",  # 6to4 from a public address
    ],
)
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
        "http://127.1/hook",
        "http://[::127.0.0.1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://[64:ff9b::7f00:1]/hook",
        "http://[2002:7f00:1::]/hook",
        "http://app.localhost/hook",
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


def test_a_name_is_accepted_without_any_dns_look_up(private_urls_refused, monkeypatch):
    """A server without outbound DNS can register URLs: names are checked when the
    request is made, on the address connected to."""

    def no_dns(*args, **kwargs):
        raise AssertionError("no DNS look-up when a URL is given")

    monkeypatch.setattr("socket.getaddrinfo", no_dns)
    assert url_problem("https://no-such-host.invalid/hook") is None
    assert url_problem("https://crm.example.com/hook") is None


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
        get(loopback_receiver)


def test_the_session_refuses_a_name_that_resolves_to_loopback(
    private_urls_refused, loopback_receiver
):
    # Accepted when given (no DNS then), refused on the socket when the request is made.
    url = loopback_receiver.replace("127.0.0.1", "localhost")
    assert url_problem(url.replace("localhost", "crm.localtest.invalid")) is None
    with pytest.raises(PrivateAddressRefused):
        get(url)


def test_the_session_connects_when_private_urls_are_allowed(
    private_urls_allowed, loopback_receiver
):
    response = get(loopback_receiver)
    assert response.status == 204


def test_the_session_ignores_proxies_from_the_environment(
    monkeypatch, private_urls_allowed, loopback_receiver
):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens on the discard port
    response = get(loopback_receiver)
    assert response.status == 204


def test_a_refused_connection_is_not_a_requests_error(private_urls_refused, loopback_receiver):
    # Callers tell "refused by the rule" (permanent) from "network trouble" (retry).
    with pytest.raises(PrivateAddressRefused) as refused:
        get(loopback_receiver)
    assert not isinstance(refused.value, OSError)


def test_a_threads_connections_are_kept_alive(
    private_urls_allowed, loopback_server, loopback_receiver
):
    # Three requests from each of two threads: one connection a thread carries them.
    def three() -> None:
        for _ in range(3):
            get(loopback_receiver)

    for _ in range(2):
        worker = threading.Thread(target=three)
        worker.start()
        worker.join()
    clients = [client for client, _ in loopback_server.seen]
    assert len(clients) == 6
    assert clients[0] == clients[1] == clients[2] != clients[3] == clients[4] == clients[5]


def test_a_urls_user_and_password_go_as_basic_authentication(
    private_urls_allowed, loopback_server, loopback_receiver
):
    get(loopback_receiver.replace("http://", "http://crm%20user:p%40ss@"))
    get(loopback_receiver)
    (_, sent), (_, none) = loopback_server.seen
    assert sent == "Basic " + base64.b64encode(b"crm user:p@ss").decode()
    assert none is None


def test_a_url_that_is_not_http_is_refused_before_connecting(private_urls_allowed):
    with pytest.raises(RequestFailed, match="Not an http"):
        get("ftp://127.0.0.1/hook")


def test_threads_at_once_keep_a_connection_each(
    private_urls_allowed, loopback_server, loopback_receiver
):
    # 200 requests from 16 threads at once: each answered, on at most one connection a
    # thread (one per request if none were kept).
    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(lambda _: get(loopback_receiver).status, range(200)))
    assert statuses == [204] * 200
    assert len(loopback_server.seen) == 200
    assert len({client for client, _ in loopback_server.seen}) <= 16


def post(
    url: str, bound, *, body: bytes, keep: int = 1024, read_limit: int = 65536
) -> PublicAnswer:
    headers = {"content-type": "application/json"}
    return request_public(
        url, headers=headers, bound=bound, body=body, keep=keep, read_limit=read_limit
    )


def test_a_post_goes_whole_with_its_headers_and_no_expect(private_urls_allowed):
    body = b'{"n": "' + b"x" * 4000 + b'"}'  # past libcurl's threshold for Expect: 100-continue
    with WebhookReceiver() as receiver, deadline(5) as bound:
        answer = post(receiver.url, bound, body=body)
    assert answer.status == 200
    [received] = receiver.requests
    assert received.body == body
    assert received.headers["content-type"] == "application/json"
    assert received.headers["content-length"] == str(len(body))
    assert "expect" not in received.headers


def test_a_deadline_cut_short_ends_a_request_on_a_kept_connection(private_urls_allowed):
    # The watchdog's cut (a worker stopping brings every deadline forward) must reach a
    # connection libcurl kept from an earlier request, which no socket of this one made.
    with WebhookReceiver() as receiver:
        with deadline(5) as bound:
            post(receiver.url, bound, body=b"{}")
        receiver.delay = 1.5  # the receiver records the request, then answers
        started = time.monotonic()
        cut_off = pytest.raises(DeadlineExceeded, match="No complete answer within 10 s")
        with cut_off, deadline(10) as bound:
            threading.Timer(0.3, bound.cut).start()
            post(receiver.url, bound, body=b"{}")
        took = time.monotonic() - started
        assert receiver.wait_for(2, timeout=5)
    assert took < 1.2, took
    first, cut = receiver.requests
    assert first.client == cut.client  # the kept connection was the one cut


def test_connections_libcurl_closes_leave_no_descriptor_behind(private_urls_allowed):
    # Each answer is cut after its first byte, so libcurl closes each connection; the
    # copies of its descriptor the request watched go with the request.
    with WebhookReceiver() as receiver:
        with deadline(5) as bound:
            post(receiver.url, bound, body=b"{}")
        descriptors = len(os.listdir("/proc/self/fd"))
        for _ in range(50):
            with deadline(5) as bound:
                answer = post(receiver.url, bound, body=b"{}", keep=1, read_limit=1)
            assert (answer.status, answer.start) == (200, b"{")
        assert len(os.listdir("/proc/self/fd")) <= descriptors + 1
    # The first connection carried the first two requests; every other, one.
    assert len(receiver.requests) == 51
    assert len({request.client for request in receiver.requests}) == 50
