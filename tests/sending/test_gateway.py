"""The gateway on its own: the Cloud API client's error mapping and the sandbox's answers."""

import os
import re
import ssl
import time

import pytest
import trustme
from django.db import connections

from business_numbers.gateway import (
    CloudApiGateway,
    FailureKind,
    GatewayError,
    NotWritten,
    SandboxGateway,
    cloud_api,
)
from devtools.cloud_api_server import FakeCloudApi, graph_error
from tests.sending.conftest import ACCESS_TOKEN, PHONE_NUMBER_ID

PAYLOAD = {"messaging_product": "whatsapp", "to": "4915123456789", "type": "text"}


@pytest.fixture
def client(graph):
    return CloudApiGateway(phone_number_id=PHONE_NUMBER_ID, access_token=ACCESS_TOKEN)


def failure(client) -> GatewayError:
    with pytest.raises(GatewayError) as info:
        client.send_message(PAYLOAD)
    return info.value


@pytest.mark.parametrize(
    ("status", "body", "kind", "retryable"),
    [
        (400, graph_error(131047, "Re-engagement message"), FailureKind.REFUSED, False),
        (
            400,
            graph_error(100, "Invalid parameter", type="OAuthException"),
            FailureKind.REFUSED,
            False,
        ),
        (429, graph_error(130429, "Rate limit hit"), FailureKind.REFUSED, True),
        (400, graph_error(131056, "Pair rate limit hit"), FailureKind.REFUSED, True),
        (401, graph_error(190, "Invalid OAuth access token."), FailureKind.CREDENTIALS, False),
        (403, graph_error(200, "Permissions error"), FailureKind.CREDENTIALS, False),
        (400, graph_error(190, "Session has expired"), FailureKind.CREDENTIALS, False),
        (503, graph_error(131016, "Service unavailable"), FailureKind.UNAVAILABLE, True),
        (502, None, FailureKind.UNAVAILABLE, True),
        (404, None, FailureKind.UNAVAILABLE, False),
        (401, None, FailureKind.CREDENTIALS, False),
    ],
)
def test_http_errors_map_to_a_kind_and_say_whether_to_retry(
    client, graph, status, body, kind, retryable
):
    if body is None:
        graph.reply(status, body=b"<html>Error</html>", content_type="text/html")
    else:
        graph.reply(status, body)

    error = failure(client)

    assert (error.kind, error.retryable, error.http_status) == (kind, retryable, status)
    if body is not None:
        assert error.code == body["error"]["code"]
        assert error.fbtrace_id == body["error"]["fbtrace_id"]


def test_a_slow_answer_is_a_retryable_timeout(client, graph, settings):
    settings.WHATSAPP_TIMEOUT = 0.2
    graph.reply(delay=1)

    error = failure(client)

    assert (error.kind, error.retryable) == (FailureKind.TIMEOUT, True)


def test_an_answer_slower_than_the_connect_timeout_is_waited_for(
    client, graph, settings, monkeypatch
):
    # The connect timeout bounds the connect only: the answer has WHATSAPP_TIMEOUT.
    monkeypatch.setattr(cloud_api, "CONNECT_TIMEOUT", 0.2)
    settings.WHATSAPP_TIMEOUT = 2
    graph.reply(200, {"messages": [{"id": "wamid.slow"}]}, delay=0.6)

    assert client.send_message(PAYLOAD)["messages"][0]["id"] == "wamid.slow"


def test_an_answer_dripping_a_byte_a_second_is_cut_off_at_the_timeout(client, graph, settings):
    # Each byte comes well within a read timeout; the whole answer does not.
    settings.WHATSAPP_TIMEOUT = 1
    graph.reply(200, {"messages": [{"id": "wamid.1"}]}, drip=0.5)

    started = time.monotonic()
    error = failure(client)

    assert time.monotonic() - started < 2.5
    assert (error.kind, error.retryable) == (FailureKind.TIMEOUT, True)


def test_a_redirect_is_not_followed_and_the_token_stays(client, graph):
    with FakeCloudApi() as elsewhere:
        graph.reply(307, body=b"", headers={"Location": f"{elsewhere.url}/elsewhere"})

        error = failure(client)

    assert elsewhere.requests == []
    assert (error.kind, error.type, error.http_status) == (
        FailureKind.UNAVAILABLE,
        "invalid_response",
        307,
    )


def test_the_token_is_in_the_header_only(client, graph, caplog):
    graph.reply(400, graph_error(131047, "Re-engagement message"))

    error = failure(client)

    [request] = graph.requests
    assert request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert ACCESS_TOKEN not in request.path
    assert ACCESS_TOKEN not in repr(vars(error))
    assert ACCESS_TOKEN not in repr(client)
    assert "Re-engagement message" in caplog.text
    assert ACCESS_TOKEN not in caplog.text


HELLO_WORLD = {"name": "hello_world", "language": {"code": "en_US"}}


def test_sandbox_answers_like_the_cloud_api():
    gateway = SandboxGateway(organization_id=1)

    text = gateway.send_message({**PAYLOAD, "type": "text"})
    template = gateway.send_message({**PAYLOAD, "type": "template", "template": HELLO_WORLD})

    assert text["messaging_product"] == "whatsapp"
    assert text["contacts"] == [{"input": "4915123456789", "wa_id": "4915123456789"}]
    [message] = text["messages"]
    assert re.fullmatch(r"wamid\.[A-Za-z0-9+/]{40,}", message["id"])
    assert "message_status" not in message
    assert template["messages"][0]["message_status"] == "accepted"
    assert template["messages"][0]["id"] != message["id"]


def test_the_sandbox_refuses_a_template_it_does_not_have_as_graph_does():
    gateway = SandboxGateway(organization_id=1, templates=frozenset({("order_update", "es")}))
    unknown = {"name": "order_update", "language": {"code": "en_US"}}

    with pytest.raises(GatewayError) as refused:
        gateway.send_message({**PAYLOAD, "type": "template", "template": unknown})

    error = refused.value
    assert (error.kind, error.code, error.type, error.http_status) == (
        "refused",
        132001,
        "OAuthException",
        404,
    )
    assert error.message == "(#132001) Template name does not exist in the translation"
    assert error.details == "template name (order_update) does not exist in en_US"
    assert not error.retryable and not error.may_have_been_sent
    known = {"name": "order_update", "language": {"code": "es"}}
    assert gateway.send_message({**PAYLOAD, "type": "template", "template": known})["messages"]


@pytest.mark.django_db(transaction=True)
def test_no_transaction_is_open_while_the_channel_is_called(org_a, graph, settings):
    from business_numbers import services as number_services
    from tests.factories import issue_token

    number_services.configure_channel(organization=org_a, phone_number_id="1", access_token="t")
    # This thread's connection object itself (`connection` is a per-thread proxy),
    # read from the server's thread while the request is in flight.
    django_connection = connections["default"]
    seen = []
    graph.on_request = lambda request: seen.append(django_connection.in_atomic_block)
    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_token(org_a)}")

    response = api.post("/api/send", {"phone": "+4915123456789", "message": "Hi"}, format="json")

    assert response.status_code == 200
    assert seen == [False]


# The environment's proxy and CA settings, read once per origin; ~/.netrc never.


@pytest.fixture
def environment(monkeypatch):
    """Clean proxy variables, and the gateway's per-origin cache emptied around the test."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    cloud_api.route.cache_clear()
    yield monkeypatch
    cloud_api.route.cache_clear()


def test_a_proxy_from_the_environment_carries_the_send(client, graph, environment):
    with FakeCloudApi() as proxy:
        environment.setenv("HTTP_PROXY", proxy.url.rsplit("/", 1)[0])

        client.send_message(PAYLOAD)

    assert graph.requests == []
    [request] = proxy.requests
    # A request through a proxy names the whole URL; the token still goes in the header.
    assert request.path == f"{graph.url}/{PHONE_NUMBER_ID}/messages"
    assert request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"


def test_no_proxy_is_honoured(client, graph, environment):
    environment.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    environment.setenv("NO_PROXY", "127.0.0.1")

    client.send_message(PAYLOAD)

    assert len(graph.requests) == 1


def test_a_netrc_entry_never_replaces_the_access_token(client, graph, environment, tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password secret\n")
    netrc.chmod(0o600)
    environment.setenv("NETRC", str(netrc))

    client.send_message(PAYLOAD)

    [request] = graph.requests
    assert request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"


def test_a_forked_child_opens_its_own_connections(client, graph):
    parent = cloud_api.route_for(graph.url)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its route is a new one, and it reports whether it is
        os.write(write, b"new" if cloud_api.route_for(graph.url) is not parent else b"same")
        os._exit(0)
    os.waitpid(pid, 0)

    assert os.read(read, 8) == b"new"
    assert cloud_api.route_for(graph.url) is parent  # the parent keeps its own


# Graph over https: the CA bundle from the environment, and a certificate it does not
# vouch for refused.


@pytest.fixture
def tls_graph(graph):
    """The fake Cloud API behind TLS, its certificate issued by a CA of the test's own;
    the CA, and the https URL that reaches the server."""
    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    graph.server.socket = context.wrap_socket(graph.server.socket, server_side=True)
    return authority, graph.url.replace("http://", "https://", 1)


def test_graph_over_https_is_reached_with_the_environments_ca_bundle(
    client, graph, tls_graph, environment, settings, tmp_path
):
    authority, settings.WHATSAPP_GRAPH_URL = tls_graph
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    environment.setenv("REQUESTS_CA_BUNDLE", str(bundle))

    client.send_message(PAYLOAD)
    client.send_message(PAYLOAD)

    assert len(graph.requests) == 2


def test_a_certificate_the_bundle_does_not_vouch_for_is_refused(
    client, graph, tls_graph, environment, settings
):
    _, settings.WHATSAPP_GRAPH_URL = tls_graph  # the CA is in no bundle

    error = failure(client)

    assert (error.kind, error.type) == (FailureKind.UNAVAILABLE, "connection_error")
    assert graph.requests == []


def test_may_write_is_asked_once_before_the_request_is_written(client, graph):
    """A campaign's message leaves only while its turn holds: the gateway asks at the
    last moment before the request's bytes go, once."""
    asked = []

    def may_write():
        asked.append(len(graph.requests))
        return True

    client.send_message(PAYLOAD, may_write=may_write)

    assert asked == [0]  # before Graph had the request
    assert len(graph.requests) == 1


@pytest.mark.parametrize(
    "channel",
    [
        {"access_token": "a-token\nwith: a line break"},
        {"access_token": "a-token-\u00e9-\u4e00"},  # not Latin-1: no header value
    ],
)
def test_a_request_whose_head_cannot_be_written_is_a_gateway_error_and_never_asks(graph, channel):
    client = CloudApiGateway(
        **{"phone_number_id": PHONE_NUMBER_ID, "access_token": ACCESS_TOKEN, **channel}
    )
    asked = []

    with pytest.raises(GatewayError) as info:
        client.send_message(PAYLOAD, may_write=lambda: asked.append(1) or True)

    assert (info.value.kind, info.value.type) == (FailureKind.UNAVAILABLE, "invalid_request")
    # The head is built before the turn is asked: a turn is never spent on a request
    # that cannot go.
    assert asked == []
    assert graph.requests == []


def test_a_media_download_whose_head_cannot_be_written_is_a_gateway_error(graph):
    client = CloudApiGateway(phone_number_id=PHONE_NUMBER_ID, access_token="a\ntoken")

    with pytest.raises(GatewayError) as info:
        list(client.download_media(f"{graph.url}/media", max_bytes=100, chunk_size=10))

    assert info.value.type == "invalid_request"
    assert graph.requests == []


def test_a_request_may_write_refuses_is_not_written_and_the_next_one_goes(client, graph):
    with pytest.raises(NotWritten):
        client.send_message(PAYLOAD, may_write=lambda: False)

    assert graph.requests == []
    assert cloud_api.write_check.may_write is None  # nor does it linger for the next request
    client.send_message(PAYLOAD)
    assert len(graph.requests) == 1


def test_a_request_not_written_leaves_its_connection_for_the_next_one(client, graph):
    # A send whose turn had passed was connected: its connection, unused, goes back to
    # the pool rather than being closed (a new TCP and TLS handshake for the next send).
    with pytest.raises(NotWritten):
        client.send_message(PAYLOAD, may_write=lambda: False)
    kept = cloud_api.route_for(graph.url).opener.pool.items[-1]
    assert kept is not None and kept.sock is not None
    port = kept.sock.getsockname()[1]

    client.send_message(PAYLOAD, may_write=lambda: True)

    [request] = graph.requests
    assert request.client[1] == port


def test_may_write_is_not_asked_for_a_request_that_never_left(client, graph):
    graph.stop()  # nothing listens: the connection is refused
    asked = []

    with pytest.raises(GatewayError) as refused:
        client.send_message(PAYLOAD, may_write=lambda: asked.append(1) or True)

    assert asked == []
    assert not refused.value.may_have_been_sent
    assert cloud_api.write_check.may_write is None


def test_the_sandbox_asks_may_write_before_it_sends():
    sandbox = SandboxGateway(organization_id=1)

    with pytest.raises(NotWritten):
        sandbox.send_message(PAYLOAD, may_write=lambda: False)
    assert sandbox.send_message(PAYLOAD, may_write=lambda: True)["messages"]
