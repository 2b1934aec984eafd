"""The lock-free queue of idle connections under urllib3's pools (messaging_project/core/
http_pools.py), against a real keep-alive server on loopback: connections are reused, the
pool keeps about `maxsize` of them however many threads return theirs at once, and an
empty or full stack answers as urllib3 expects."""

import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from urllib3.connectionpool import HTTPConnectionPool

from messaging_project.core.http_pools import ConnectionStack


class KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Head and body are two writes: without this the body waits for the client's
    # delayed ACK (40 ms a request).
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args) -> None:
        pass


class StackPool(HTTPConnectionPool):
    QueueCls = ConnectionStack


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), KeepAlive)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_one_thread_reuses_one_connection(server):
    pool = StackPool("127.0.0.1", server, maxsize=4)
    for _ in range(50):
        assert pool.request("GET", "/").status == 200
    assert pool.num_connections == 1


def test_many_threads_keep_about_maxsize_connections(server):
    pool = StackPool("127.0.0.1", server, maxsize=4)

    def calls() -> int:
        return sum(pool.request("GET", "/").status == 200 for _ in range(25))

    with ThreadPoolExecutor(8) as threads:
        assert sum(threads.map(lambda _: calls(), range(8))) == 200
    # Two threads returning at once may both find room: at most one more each.
    assert pool.pool.qsize() <= 4 + 8
    opened = pool.num_connections
    assert pool.request("GET", "/").status == 200
    assert pool.num_connections == opened  # an idle one was taken, not a new one


def test_an_empty_stack_and_a_full_one_answer_as_urllib3_expects():
    stack = ConnectionStack(2)
    with pytest.raises(queue.Empty):
        stack.get(block=False)
    stack.put("a", block=False)
    stack.put("b", block=False)
    with pytest.raises(queue.Full):
        stack.put("c", block=False)
    assert [stack.get(), stack.get()] == ["b", "a"]  # the most recent first, as LifoQueue
