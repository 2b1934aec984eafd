"""The stand-in's status poster reads each answer whole, by its length or its chunks:
a byte left unread would be taken for the next answer's head, and a post written on a
connection the service had closed would look answered (its status lost)."""

import asyncio

from bench.cloud_stub import read_body


def leftover(answer: bytes) -> bytes:
    async def read() -> bytes:
        reader = asyncio.StreamReader()
        reader.feed_data(answer + b"NEXT")
        reader.feed_eof()
        head = await reader.readuntil(b"\r\n\r\n")
        await read_body(reader, head)
        return await reader.read()

    return asyncio.run(read())


def test_an_answer_with_a_length_is_read_to_its_end():
    assert leftover(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") == b"NEXT"


def test_a_chunked_answer_is_read_to_its_last_chunk():
    answer = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'5\r\n{"a":\r\n3;ext=1\r\n 1}\r\n0\r\n\r\n'
    )
    assert leftover(answer) == b"NEXT"
