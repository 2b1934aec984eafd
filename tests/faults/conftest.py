"""Fixtures for fault tests: a Cloud API stand-in that can also misbehave at the socket."""

import json
import socket
import struct
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

import pytest

from sending.gateway import sandbox
from tests.cloud_api_server import FakeCloudApi, RecordedRequest, Reply


@dataclass
class FaultReply(Reply):
    hang_up: bool = False  # read the request, then close without a status line
    cut_after: int | None = None  # promise the whole body, send this many bytes, close


class FaultyCloudApi(FakeCloudApi):
    """FakeCloudApi plus the failures only a raw socket can show."""

    def fault(self, **kwargs) -> None:
        with self.lock:
            self.replies.append(FaultReply(**kwargs))

    def handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):
                pass

            def do_GET(self):
                self.answer()

            def do_POST(self):
                self.answer()

            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    data = json.loads(body) if body else None
                except ValueError:
                    data = None
                reply = fake.next_reply(
                    RecordedRequest(self.command, self.path, dict(self.headers.items()), body, data)
                )
                if reply.delay:
                    threading.Event().wait(reply.delay)
                if getattr(reply, "hang_up", False):
                    self.close_connection = True  # the server closes the socket, cleanly (FIN)
                    return
                if reply.reset:
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.connection.close()
                    self.close_connection = True
                    return
                content = reply.body if reply.body is not None else json.dumps(reply.json).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                cut = getattr(reply, "cut_after", None)
                self.wfile.write(content if cut is None else content[:cut])
                if cut is not None:
                    self.wfile.flush()
                    self.close_connection = True

        return Handler


@pytest.fixture(autouse=True)
def empty_outbox():
    sandbox.clear_outbox()
    yield
    sandbox.clear_outbox()


@pytest.fixture
def graph(settings):
    with FaultyCloudApi() as server:
        settings.WHATSAPP_GRAPH_URL = server.url
        settings.WHATSAPP_TIMEOUT = 0.5
        yield server
