"""A stand-in for the WhatsApp Cloud API that answers every send after a fixed delay.

`python -m bench.cloud_stub PORT [DELAY_SECONDS [ARRIVALS_FILE]]`. asyncio, so hundreds
of sends can wait at once without a thread each; keep-alive like Graph. It answers
`POST /<version>/<phone_number_id>/messages` with the Cloud API's success body. With
ARRIVALS_FILE, it appends a line `<to>\t<unix time>` as each send arrives, before the
delay: the auto-reply scenario's clock (bench/autoreply.py).
"""

import asyncio
import itertools
import json
import sys
import time
import uuid

ids = itertools.count(1)
# Message ids are unique across stand-ins too, as Graph's are: a database kept from an
# earlier run (--keep-database) must not see an id again.
RUN = uuid.uuid4().hex[:8]


async def handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, arrivals=None
):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            try:
                to = json.loads(body).get("to", "")
            except ValueError:
                to = ""
            if arrivals is not None:
                arrivals.write(f"{to}\t{time.time():.6f}\n")
            await asyncio.sleep(delay)
            answer = json.dumps(
                {
                    "messaging_product": "whatsapp",
                    "contacts": [{"input": to, "wa_id": to}],
                    "messages": [{"id": f"wamid.stub.{RUN}.{next(ids)}"}],
                }
            ).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(answer)}\r\n\r\n".encode()
                + answer
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port: int, delay: float, arrivals_path: str | None = None) -> None:
    # Line-buffered: the scenario reads the file while the stand-in runs.
    arrivals = open(arrivals_path, "a", buffering=1) if arrivals_path else None  # noqa: SIM115
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, delay, arrivals), "127.0.0.1", port, backlog=1024
    )
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(
        main(
            int(sys.argv[1]),
            float(sys.argv[2]) if len(sys.argv) > 2 else 0.2,
            sys.argv[3] if len(sys.argv) > 3 else None,
        )
    )
