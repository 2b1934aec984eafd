"""A stand-in for the WhatsApp Cloud API that answers every send after a fixed delay.

`python -m bench.cloud_stub PORT [DELAY_SECONDS [ARRIVALS_FILE]]`. asyncio, so hundreds
of sends can wait at once without a thread each; keep-alive like Graph. It answers
`POST /<version>/<phone_number_id>/messages` with the Cloud API's success body. With
ARRIVALS_FILE, it appends a line `<to>\t<unix time>` for each send, before the delay:
the campaign and auto-reply scenarios' clock (bench/campaigns.py, bench/autoreply.py).

With STUB_STATUS_URL (and STUB_APP_SECRET) in its environment it also plays WhatsApp's
status webhooks: after answering a send it posts that message's `sent`, then its
`delivered`, one status per webhook, signed, to that URL over STATUS_CONNECTIONS
keep-alive connections (bench/throughput.py).

The time is when the request's first bytes reached this machine's network stack (the
kernel's receive timestamp, SO_TIMESTAMPNS), not when this process got round to reading
them: the stand-in shares two cores with the service it measures, and a stamp taken
when it is next scheduled can be tens of milliseconds late, which would make arrivals
look bunched that were not.
"""

import asyncio
import hashlib
import hmac
import itertools
import json
import os
import socket
import struct
import sys
import time
import uuid
from urllib.parse import urlsplit

ids = itertools.count(1)
# Message ids are unique across stand-ins too, as Graph's are: a database kept from an
# earlier run (--keep-database) must not see an id again.
RUN = uuid.uuid4().hex[:8]

# Linux's values (asm-generic/socket.h); Python's socket module does not name them. The
# kernel answers SO_TIMESTAMPNS with either form of the control message.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SCM_TIMESTAMPNS = {SO_TIMESTAMPNS, 64}  # SO_TIMESTAMPNS_OLD, SO_TIMESTAMPNS_NEW
TIMESPEC = struct.Struct("@qq")
ANCILLARY_SPACE = socket.CMSG_SPACE(TIMESPEC.size)
CHUNK = 65536
STATUS_CONNECTIONS = 16


def kernel_time(ancillary: list) -> float:
    """The receive timestamp the kernel attached, or now if it attached none."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind in SCM_TIMESTAMPNS and len(data) >= TIMESPEC.size:
            seconds, nanoseconds = TIMESPEC.unpack_from(data)
            return seconds + nanoseconds / 1e9
    return time.time()


async def receive(sock: socket.socket) -> tuple[bytes, float]:
    """The next bytes on `sock` (b"" at its end) and when they arrived."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(CHUNK, ANCILLARY_SPACE)
            return data, kernel_time(ancillary)
        except BlockingIOError:
            readable = loop.create_future()
            loop.add_reader(sock.fileno(), readable.set_result, None)
            try:
                await readable
            finally:
                loop.remove_reader(sock.fileno())


def content_length(head: bytes) -> int:
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            return int(value)
    return 0


async def handle(sock: socket.socket, delay: float, arrivals=None, statuses=None) -> None:
    loop = asyncio.get_running_loop()
    buffered, buffered_at = b"", 0.0  # bytes read ahead, and when the first of them came
    try:
        while True:
            while b"\r\n\r\n" not in buffered:
                data, at = await receive(sock)
                if not data:
                    return
                if not buffered:
                    buffered_at = at
                buffered += data
            arrived = buffered_at  # the request's first bytes
            head, _, buffered = buffered.partition(b"\r\n\r\n")
            length = content_length(head)
            while len(buffered) < length:
                data, _ = await receive(sock)
                if not data:
                    return
                buffered += data
            body, buffered = buffered[:length], buffered[length:]
            try:
                sent = json.loads(body) if body else {}
                to = sent.get("to", "")
            except (ValueError, AttributeError):
                sent, to = {}, ""
            if arrivals is not None:
                arrivals.write(f"{to}\t{arrived:.6f}\n")
            await asyncio.sleep(delay)
            wam_id = f"wamid.stub.{RUN}.{next(ids)}"
            answer = json.dumps(
                {
                    "messaging_product": "whatsapp",
                    "contacts": [{"input": to, "wa_id": to}],
                    "messages": [{"id": wam_id}],
                }
            ).encode()
            await loop.sock_sendall(
                sock,
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(answer)}\r\n\r\n".encode()
                + answer,
            )
            if statuses is not None and to:
                path = head.split(b" ", 2)[1].decode("latin-1")
                statuses.put_nowait((path.split("/")[-2], wam_id, to, sent))
    except (ConnectionError, ValueError):
        pass
    finally:
        sock.close()


def status_webhook(phone_number_id: str, wam_id: str, to: str, sent: dict, name: str) -> bytes:
    status = {"id": wam_id, "status": name, "timestamp": str(int(time.time())), "recipient_id": to}
    if "biz_opaque_callback_data" in sent:
        status["biz_opaque_callback_data"] = sent["biz_opaque_callback_data"]
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550000000", "phone_number_id": phone_number_id},
        "statuses": [status],
    }
    change = {"field": "messages", "value": value}
    entry = {"id": "100000000000000", "changes": [change]}
    return json.dumps({"object": "whatsapp_business_account", "entry": [entry]}).encode()


async def read_body(reader: asyncio.StreamReader, head: bytes) -> None:
    """The answer's body, by its length or its chunks: a byte left unread would be taken
    for the next answer's head, and a post written on a connection the service closed
    would then look answered (and its status lost)."""
    if b"transfer-encoding: chunked" not in head.lower():
        await reader.readexactly(content_length(head))
        return
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16):
        await reader.readexactly(size + 2)  # the chunk and its CRLF
    await reader.readuntil(b"\r\n")  # (no trailers)


async def post_statuses(queue: asyncio.Queue, url: str, secret: str) -> None:
    """One keep-alive connection posting each answered send's `sent`, then `delivered`."""
    parts = urlsplit(url)
    reader = writer = None
    while True:
        phone_number_id, wam_id, to, sent = await queue.get()
        for name in ("sent", "delivered"):
            body = status_webhook(phone_number_id, wam_id, to, sent, name)
            signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            request = (
                f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                f"Content-Type: application/json\r\nX-Hub-Signature-256: {signature}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode() + body
            for _ in range(2):  # a connection the service closed meanwhile: once more
                try:
                    if writer is None:
                        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
                    writer.write(request)
                    head = await reader.readuntil(b"\r\n\r\n")
                    await read_body(reader, head)
                except (
                    OSError,
                    ValueError,
                    asyncio.IncompleteReadError,
                    asyncio.LimitOverrunError,
                ):
                    writer = None
                    continue
                if b"connection: close" in head.lower():
                    writer.close()
                    writer = None
                break


async def main(port: int, delay: float, arrivals_path: str | None = None) -> None:
    # Line-buffered: the scenario reads the file while the stand-in runs.
    arrivals = open(arrivals_path, "a", buffering=1) if arrivals_path else None  # noqa: SIM115
    loop = asyncio.get_running_loop()
    listener = socket.create_server(("127.0.0.1", port), backlog=1024)
    # Set on the listener, so that every accepted socket has it from its first byte (the
    # kernel turns receive timestamps on a moment after the first socket asks).
    listener.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    listener.setblocking(False)
    connections = set()  # the tasks, so that none is collected while it runs
    statuses = None
    if os.environ.get("STUB_STATUS_URL"):
        statuses = asyncio.Queue()
        for _ in range(STATUS_CONNECTIONS):
            poster = post_statuses(
                statuses, os.environ["STUB_STATUS_URL"], os.environ.get("STUB_APP_SECRET", "")
            )
            connections.add(asyncio.create_task(poster))
    while True:
        sock, _ = await loop.sock_accept(listener)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        task = asyncio.create_task(handle(sock, delay, arrivals, statuses))
        connections.add(task)
        task.add_done_callback(connections.discard)


if __name__ == "__main__":
    asyncio.run(
        main(
            int(sys.argv[1]),
            float(sys.argv[2]) if len(sys.argv) > 2 else 0.2,
            sys.argv[3] if len(sys.argv) > 3 else None,
        )
    )
