"""A receiver of event webhooks that never answers: a real HTTP server on loopback that
reads each request, records it, and holds the connection open without a word until it
is stopped. What an endpoint whose service hangs looks like to the worker.

    with SilentReceiver() as dead:
        ...  # endpoints at dead.url
        dead.ids()  # the webhook-id of every request it got
"""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from devtools.loopback import HOST
from devtools.webhook_receiver import Received


class SilentServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class SilentReceiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.server = SilentServer((HOST, 0), self.handler_class())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server.server_address[1]}/hook"

    def ids(self) -> list[str]:
        with self.lock:
            return [request.headers.get("webhook-id", "") for request in self.requests]

    def start(self) -> "SilentReceiver":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.released.set()  # the held connections close unanswered
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "SilentReceiver":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def handler_class(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # quiet test output
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.lock:
                    receiver.requests.append(Received(self.path, headers, body, time.time()))
                receiver.released.wait()
                self.close_connection = True

        return Handler
