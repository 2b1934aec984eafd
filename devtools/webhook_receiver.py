"""A receiver of event webhooks: a real HTTP server on loopback that records what it gets.

    with WebhookReceiver() as receiver:
        receiver.fail_next(500, 500)  # the next two POSTs get a 500, then 200s
        ...
        receiver.requests[0].headers["webhook-id"]

Tests verify the signatures with the Standard Webhooks library; the benchmark uses
`delay` (every answer waits that long) and `down` (refuse connections for a while).
`drip` sends the answer one byte at a time, that many seconds apart (a receiver that
never quite answers).
"""

import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from devtools.loopback import HOST


@dataclass
class Received:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: float  # time.time() when it arrived
    client: tuple = ()  # the sender's (address, port): one per connection

    @property
    def text(self) -> str:
        return self.body.decode()


class ReceiverServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the benchmark's bursts of connections


class WebhookReceiver:
    def __init__(
        self, *, delay: float = 0.0, status: int = 200, port: int = 0, drip: float = 0.0
    ) -> None:
        self.delay = delay
        self.drip = drip
        self.status = status
        self.requests: list[Received] = []
        self.scripted: deque[int] = deque()
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.server = ReceiverServer((HOST, port), self.handler_class())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server.server_address[1]}/hook"

    def start(self) -> "WebhookReceiver":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "WebhookReceiver":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def fail_next(self, *statuses: int) -> None:
        """Answer the next POSTs with these statuses, in turn; then `status` again."""
        with self.lock:
            self.scripted.extend(statuses)

    def wait_for(self, count: int, timeout: float = 10) -> bool:
        """Whether `count` requests have arrived within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.arrived.wait(left)
        return True

    def handler_class(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The answer's head and body are two writes: with Nagle's algorithm the
            # body waits for the client's delayed ACK of the head (40 ms on Linux).
            disable_nagle_algorithm = True

            def log_message(self, format, *args):  # quiet test output
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                if receiver.delay:
                    time.sleep(receiver.delay)
                with receiver.arrived:
                    receiver.requests.append(
                        Received(
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                            time.time(),
                            self.client_address,
                        )
                    )
                    status = receiver.scripted.popleft() if receiver.scripted else receiver.status
                    receiver.arrived.notify_all()
                answer = b'{"ok": true}' if 200 <= status < 300 else b"receiver says no"
                if receiver.drip:
                    self.drip(status, answer)
                    return
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def drip(self, status: int, answer: bytes) -> None:
                whole = (
                    f"HTTP/1.1 {status} OK\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(answer)}\r\n\r\n"
                ).encode() + answer
                self.close_connection = True
                try:
                    for byte in whole:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(receiver.drip)
                except OSError:  # the client gave up
                    pass

        return Handler
