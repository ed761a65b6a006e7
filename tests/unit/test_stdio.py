"""stdin read by the event loop (ragls/stdio.py): real pipes, real files."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ragls.stdio import is_pipe, loop_reader


async def test_a_pipe_is_read_by_the_loop_line_by_line_and_body_by_length() -> None:
    r, w = os.pipe()
    with os.fdopen(r, "rb", buffering=0) as stdin:
        reader = await loop_reader(stdin)
        assert reader is not None
        body = b'{"jsonrpc": "2.0", "method": "x"}'
        message = b"Content-Length: %d\r\n\r\n" % len(body) + body

        async def write_in_pieces() -> None:
            for i in range(0, len(message), 7):  # a message may arrive in any number of reads
                os.write(w, message[i : i + 7])
                await asyncio.sleep(0)
            os.write(w, message)
            os.close(w)

        writer = asyncio.create_task(write_in_pieces())
        for _ in range(2):
            assert await reader.readline() == b"Content-Length: %d\r\n" % len(body)
            assert await reader.readline() == b"\r\n"
            assert await reader.readexactly(len(body)) == body
        await writer
        assert await reader.readline() == b""  # the client closed the stream: the session ends


async def test_a_body_cut_short_by_the_client_ends_the_session() -> None:
    r, w = os.pipe()
    with os.fdopen(r, "rb", buffering=0) as stdin:
        reader = await loop_reader(stdin)
        assert reader is not None
        os.write(w, b"Content-Length: 100\r\n\r\n{")
        os.close(w)
        assert await reader.readline() == b"Content-Length: 100\r\n"
        assert await reader.readline() == b"\r\n"
        assert await reader.readexactly(100) == b""


async def test_a_regular_file_keeps_the_threaded_reader(tmp_path: Path) -> None:
    f = tmp_path / "input"
    f.write_bytes(b"Content-Length: 2\r\n\r\n{}")
    with f.open("rb") as stdin:
        assert not is_pipe(stdin)
        assert await loop_reader(stdin) is None
        assert os.get_blocking(stdin.fileno())  # its mode is left alone
