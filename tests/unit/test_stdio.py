"""stdin read by the event loop and framed by ragls/system/stdio.py: real pipes, real files."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ragls.system.stdio import MAX_BODY, Framer, FramingError, LoopReader, ThreadReader, is_pipe, loop_reader


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(rid: int, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "rag/indexStatus", "params": params}


class Pipe:
    """A real pipe: the test writes the client's bytes, the framer reads the other end."""

    def __init__(self, framer: Framer, w: int) -> None:
        self.framer = framer
        self.w = w

    async def send(self, data: bytes) -> None:
        # In a thread: a pipe holds 64 KiB, and the framer on this loop drains it.
        view = memoryview(data)
        while view:
            view = view[await asyncio.to_thread(os.write, self.w, view) :]

    def close(self) -> None:
        if self.w >= 0:
            os.close(self.w)
            self.w = -1

    async def next(self, timeout: float = 5) -> bytes | FramingError | None:
        return await asyncio.wait_for(self.framer.next(), timeout)

    async def message(self, timeout: float = 5) -> dict[str, Any]:
        item = await self.next(timeout)
        assert isinstance(item, bytes), item
        return json.loads(item)


@pytest.fixture
async def pipe() -> AsyncIterator[Pipe]:
    r, w = os.pipe()
    with os.fdopen(r, "rb", buffering=0) as stdin:
        reader = await loop_reader(stdin)
        assert isinstance(reader, LoopReader)
        framer = Framer(reader)
        p = Pipe(framer, w)
        yield p
        framer.close()
        p.close()


async def test_messages_in_any_number_of_reads_come_out_whole(pipe: Pipe) -> None:
    message = frame(request(1)) + frame(request(2))

    async def write_in_pieces() -> None:
        for i in range(0, len(message), 7):  # a message may arrive in any number of reads
            await pipe.send(message[i : i + 7])
            await asyncio.sleep(0)
        await pipe.send(b"\r\n" + frame(request(3)))  # a stray blank line between messages is fine
        pipe.close()

    writer = asyncio.create_task(write_in_pieces())
    assert [(await pipe.message())["id"] for _ in range(3)] == [1, 2, 3]
    await writer
    assert await pipe.next() is None  # the client closed the stream: the session ends


async def test_headers_are_read_as_the_base_protocol_allows(pipe: Pipe) -> None:
    body = json.dumps(request(1)).encode()
    await pipe.send(
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:%d \r\n\r\n" % len(body) + body
    )
    assert (await pipe.message())["id"] == 1


async def test_a_body_that_quotes_a_header_is_not_split(pipe: Pipe) -> None:
    # An editor buffer of an HTTP client: the text holds header lines, escaped inside JSON.
    text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello}\r\nContent-Length: 12\r\n"
    await pipe.send(frame(request(1, text=text)) + frame(request(2)))
    assert (await pipe.message())["params"]["text"] == text
    assert (await pipe.message())["id"] == 2


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (b"Content-Length: abc\r\n\r\n{}", "not a number"),
        (b"Content-Length: -5\r\n\r\n{}", "not a number"),
        (b"Content-Length: 12.5\r\n\r\n{}", "not a number"),
        (b"Content-Length: 99999999999999999999999\r\n\r\n{}", "not a number"),
        (b"Content-Length: %d\r\n\r\n{}" % (MAX_BODY + 1), "limit"),
        (b"Content-Length: 0\r\n\r\n", "empty"),
        (b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "two different"),
        (b'Content-Type: text/plain\r\n\r\n{"jsonrpc":"2.0","id":9,"method":"x"}', "without a Content-Length"),
        (b"hello there\r\nmore junk\n\n", "not a message header"),
        (b"x" * 70_000 + b"\r\n", "longer than"),
    ],
)
async def test_a_framing_fault_is_reported_and_the_next_message_read(pipe: Pipe, bad: bytes, says: str) -> None:
    writer = asyncio.create_task(pipe.send(bad + frame(request(2))))  # may be more than a pipe holds
    err = await pipe.next()
    assert isinstance(err, FramingError) and says in err.message and err.id is None
    assert (await pipe.message())["id"] == 2
    await writer
    await pipe.send(frame(request(3)))  # and the stream stays in step
    assert (await pipe.message())["id"] == 3


async def test_a_huge_body_really_sent_is_skipped_without_buffering_it(pipe: Pipe) -> None:
    size = MAX_BODY + 1024

    async def write() -> None:
        await pipe.send(b"Content-Length: %d\r\n\r\n" % size)
        chunk = b'{"a":"' + b"x" * (1 << 20)
        for _ in range(size // len(chunk) + 1):
            await pipe.send(chunk)
        await pipe.send(b'"}' + frame(request(2)))

    writer = asyncio.create_task(write())
    err = await pipe.next()
    assert isinstance(err, FramingError) and "limit" in err.message
    assert (await pipe.message(timeout=60))["id"] == 2
    await writer
    assert len(pipe.framer._buf) < 1 << 16  # the skipped body was never held


async def test_a_content_length_longer_than_the_body_finds_the_next_message(pipe: Pipe) -> None:
    first = json.dumps(request(7)).encode()
    await pipe.send(b"Content-Length: %d\r\n\r\n" % (len(first) + 40) + first + frame(request(8)))
    err = await pipe.next()
    # The request arrived whole: its id is answered, so the client does not wait forever.
    assert isinstance(err, FramingError) and "longer than the message" in err.message and err.id == 7
    assert (await pipe.message())["id"] == 8


async def test_a_content_length_longer_than_a_lone_body_is_answered_when_nothing_follows(pipe: Pipe) -> None:
    first = json.dumps(request(7)).encode()
    await pipe.send(b"Content-Length: %d\r\n\r\n" % (len(first) + 500) + first)
    t0 = time.monotonic()
    err = await pipe.next()
    assert isinstance(err, FramingError) and err.id == 7 and time.monotonic() - t0 < 3
    await pipe.send(frame(request(8)))
    assert (await pipe.message())["id"] == 8


async def test_a_slow_body_is_waited_for(pipe: Pipe) -> None:
    body = json.dumps(request(1, text="x" * 1000)).encode()
    await pipe.send(b"Content-Length: %d\r\n\r\n" % len(body) + body[:500])
    reading = asyncio.create_task(pipe.next())
    await asyncio.sleep(1.2)  # past the idle check: a prefix that is not a whole value waits
    assert not reading.done()
    await pipe.send(body[500:])
    item = await asyncio.wait_for(reading, 5)
    assert item == body


async def test_the_tail_of_a_too_short_body_is_not_reported_twice(pipe: Pipe) -> None:
    body = json.dumps(request(1)).encode()
    await pipe.send(b"Content-Length: 20\r\n\r\n" + body + frame(request(2)))
    cut = await pipe.next()
    assert cut == body[:20]  # not JSON: the protocol answers it with a parse error
    pipe.framer.body_was_bad()
    assert (await pipe.message())["id"] == 2  # its tail is skipped without a second error


async def test_a_body_cut_short_by_the_client_ends_the_session(pipe: Pipe) -> None:
    await pipe.send(b"Content-Length: 100\r\n\r\n{")
    pipe.close()
    assert await pipe.next() is None


async def test_a_regular_file_keeps_the_threaded_reader(tmp_path: Path) -> None:
    f = tmp_path / "input"
    f.write_bytes(b"Content-Length: 2\r\n\r\n{}")
    with f.open("rb") as stdin:
        assert not is_pipe(stdin)
        assert await loop_reader(stdin) is None
        assert os.get_blocking(stdin.fileno())  # its mode is left alone
        framer = Framer(ThreadReader(stdin))
        assert await framer.next() == b"{}"
        assert await framer.next() is None
