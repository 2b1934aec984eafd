"""The loopback helpers the tests, `make bench` and `make loadtest` share."""

import ast
import socket
import subprocess
import sys
import threading
import time

from django.conf import settings

from devtools.loopback import HOST, free_port, reachable, wait_until_listening

SERVICE_PACKAGES = ["messaging_project", "accounts", "contacts", "canned_replies", "sending"]


def listen_on(port: int) -> socket.socket:
    server = socket.socket()
    server.bind((HOST, port))
    server.listen()
    return server


def test_a_free_port_answers_only_while_something_listens_on_it():
    port = free_port()
    assert not reachable(port)

    server = listen_on(port)
    assert reachable(port)

    server.close()
    assert not reachable(port)


def test_two_free_ports_taken_at_once_differ():
    first = listen_on(free_port())
    try:
        assert free_port() != first.getsockname()[1]
    finally:
        first.close()


def test_waiting_ends_as_soon_as_a_late_server_listens():
    port = free_port()
    servers = []
    timer = threading.Timer(0.3, lambda: servers.append(listen_on(port)))
    timer.start()
    start = time.monotonic()
    try:
        assert wait_until_listening(port, timeout=10)
        assert time.monotonic() - start < 5
    finally:
        timer.join()
        for server in servers:
            server.close()


def test_waiting_gives_up_after_the_timeout_when_nothing_listens():
    start = time.monotonic()

    assert not wait_until_listening(free_port(), timeout=0.3)
    assert 0.3 <= time.monotonic() - start < 3


def test_waiting_gives_up_at_once_when_the_server_process_has_exited():
    crashed = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    crashed.wait(timeout=30)
    start = time.monotonic()

    assert not wait_until_listening(free_port(), timeout=60, process=crashed)
    assert time.monotonic() - start < 5


def test_the_service_never_imports_the_devtools():
    importers = []
    for package in SERVICE_PACKAGES:
        for path in sorted((settings.BASE_DIR / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                if any(name.split(".")[0] == "devtools" for name in names):
                    importers.append(str(path.relative_to(settings.BASE_DIR)))

    assert importers == []
    assert "devtools" not in settings.INSTALLED_APPS
