"""Ports on 127.0.0.1: one that is free, whether one answers, and waiting until one does."""

import socket
import time
from subprocess import Popen

HOST = "127.0.0.1"


def free_port() -> int:
    """A port nothing listens on, picked by the kernel. It is free when this returns; the
    caller binds it soon after, as loopback tools do, and accepts that race."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def reachable(port: int, timeout: float = 1) -> bool:
    """Whether something accepts connections on the port."""
    try:
        socket.create_connection((HOST, port), timeout).close()
        return True
    except OSError:
        return False


def wait_until_listening(port: int, *, timeout: float, process: Popen | None = None) -> bool:
    """Poll until something listens on the port: False once `timeout` seconds have passed,
    or at once when `process` (the server being started) has exited, so a server that
    cannot start fails fast instead of after the whole timeout."""
    deadline = time.monotonic() + timeout
    while not reachable(port, timeout=0.5):
        if process is not None and process.poll() is not None:
            return False
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True
