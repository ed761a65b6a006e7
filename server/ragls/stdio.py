"""The LSP stream on stdin, read by the event loop itself.

pygls's stdio reader hands every header line and every body to a thread-pool executor and back
(three thread hops per message). While the indexer keeps both cores and the GIL busy, each hop
waits for the GIL twice, and a request's round trip grows by milliseconds before its handler
even starts (docs/performance.md, issue 19). A pipe or socket can be read by the loop directly
(a non-blocking transport, no thread): this module gives pygls's message loop such a reader.
Anything else on stdin (a terminal, a regular file) keeps pygls's threaded reader, which does
not change the mode of a file descriptor shared with a shell.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import BinaryIO

# Large enough for any one header line; bodies are read with readexactly, which has no limit.
_LIMIT = 1 << 20


class LoopReader:
    """pygls's AsyncReader over an asyncio stream: readline and readexactly, b"" at the end."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        try:
            return await self._stream.readline()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return b""  # the client went away mid-line, or sent garbage: end the session

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


def is_pipe(stdin: BinaryIO) -> bool:
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def loop_reader(stdin: BinaryIO) -> LoopReader | None:
    """A reader served by the running loop, or None when stdin is not a pipe or socket."""
    if not is_pipe(stdin):
        return None
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
    except (OSError, ValueError):
        return None
    return LoopReader(stream)
