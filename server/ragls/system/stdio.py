"""The LSP stream, on stdin and on the owner socket: read by the event loop itself, and framed here.

pygls's stdio reader hands every header line and every body to a thread-pool executor and back
(three thread hops per message). While the indexer keeps both cores and the GIL busy, each hop
waits for the GIL twice, and a request's round trip grows by milliseconds before its handler
even starts. A pipe or socket can be read by the loop directly (a non-blocking transport, no
thread): `loop_reader` gives such a reader. Anything else on stdin (a terminal, a regular file)
keeps a threaded reader, which does not change the mode of a file descriptor shared with a shell.

pygls's own message loop trusts the `Content-Length` header: a malformed one (not a number,
negative, absurd, missing, or longer than the body really sent) leaves it reading the wrong
bytes, and the server stops answering without a word (issue 37). `Framer` reads the stream in
chunks and answers every framing fault with a JSON-RPC parse error, then resynchronises at the
next `Content-Length: <digits>` line. That line is an unambiguous message start: a valid JSON
body cannot contain it, since `Content-Length:` is no JSON token outside a string and a JSON
string cannot hold a raw line break. `ErrorAnswers` answers those faults, and unreadable JSON,
for both of ragls's pygls protocols (frontends/lsp/server.py, sharing/owner_rpc.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

log = logging.getLogger(__name__)

# A larger body is refused (and skipped): no LSP message is anywhere near it, and a client that
# announces more must not make the server buffer it. The owner socket has the same cap.
MAX_BODY = 64 * 1024 * 1024
# One header line, and a whole header block, longer than this is garbage, not headers.
MAX_HEADER = 64 * 1024
# Bytes asked of the stream per read.
_CHUNK = 1 << 16
# A body that arrived whole (a complete JSON value) but shorter than its Content-Length, with
# nothing more coming for this long, is a Content-Length that lied, not a slow client: a valid
# body's prefix is never a complete JSON value followed only by whitespace.
_IDLE_S = 0.5

_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:[ \t]*(.*?)[ \t]*\r?\n", re.DOTALL)
# The start of a message, searched for inside bodies and garbage: the literal is found with
# bytes.find (a case-insensitive regex scan is ten times slower over a large body), then this
# confirms a whole line of digits.
_MARK = b"Content-Length"
_START = re.compile(rb"Content-Length[ \t]*:[ \t]*\d{1,20}[ \t]*\r?\n")
_START_MAX = 64  # the longest line _START accepts, give or take: kept across reads


@dataclass(frozen=True)
class FramingError:
    """A framing fault, answered with a JSON-RPC parse error (the request's id when known)."""

    message: str
    id: int | str | None = None


class Source(Protocol):
    def read(self, n: int) -> Awaitable[bytes]:
        """Up to n bytes as soon as some are there; b"" at the end of the stream."""
        ...


class LoopReader:
    """stdin as an asyncio stream, served by the running loop."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def read(self, n: int) -> bytes:
        try:
            return await self._stream.read(n)
        except (ConnectionError, OSError):
            return b""  # the client went away: end the session


class ThreadReader:
    """stdin that is not a pipe (a terminal, a file), read in the executor's threads."""

    def __init__(self, stdin: BinaryIO, executor: ThreadPoolExecutor | None = None) -> None:
        # read1 returns what one read of the file gives, so a terminal line is not held back
        # until a whole chunk arrived.
        self._read: Callable[[int], bytes] = getattr(stdin, "read1", stdin.read)
        self._executor = executor

    async def read(self, n: int) -> bytes:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, self._read, n)
        except (OSError, ValueError):
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
    # The framer reads in chunks, so the stream's line limit never applies; it only sizes
    # the buffer at which the pipe is paused.
    stream = asyncio.StreamReader(limit=1 << 20)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
    except (OSError, ValueError):
        return None
    return LoopReader(stream)


def _request_id(data: bytes) -> int | str | None:
    """The id of a message that arrived whole under a wrong Content-Length, so the client's
    request fails at once instead of waiting forever; None when there is none to be had."""
    try:
        msg = json.loads(data)
    except (ValueError, RecursionError):
        return None
    rid = msg.get("id") if isinstance(msg, dict) else None
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


def _is_json(data: bytes) -> bool:
    text = data.rstrip()
    if not text.endswith((b"}", b"]")):  # every JSON-RPC message is an object or a batch
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


class Framer:
    """LSP base-protocol framing over a byte source: `next()` gives a message body, a
    FramingError (answer it, the stream goes on at the next message) or None at the end."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._buf = bytearray()
        self._eof = False
        self._pending: asyncio.Future[bytes] | None = None  # a read left running by a timeout
        self._resync_from: int | None = None  # set after a fault: skip to the next message start
        self._quiet = False  # the garbage after a body that was not JSON is that body's tail

    def body_was_bad(self) -> None:
        """The last body did not parse (already answered): a Content-Length shorter than the
        body leaves its tail before the next header, which is not reported a second time."""
        self._quiet = True

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    async def next(self) -> bytes | FramingError | None:
        while True:
            if self._resync_from is not None:
                if not await self._resync(self._resync_from):
                    return None
                self._resync_from = None
            head = await self._header_block()
            if head is None:
                return None
            if isinstance(head, FramingError):
                if self._quiet:  # the tail of a body already answered: skip it silently
                    self._quiet = False
                    continue
                return head
            self._quiet = False
            return await self._body(head)

    async def _fill(self, timeout: float | None = None) -> bool | None:
        """Read more into the buffer: True when bytes came, False at the end of the stream, None
        when `timeout` passed first (the read goes on and is collected by the next call)."""
        if self._eof:
            return False
        try:
            if self._pending is None and timeout is None:
                data = await self._source.read(_CHUNK)
            else:
                if self._pending is None:
                    self._pending = asyncio.ensure_future(self._source.read(_CHUNK))
                done, _ = await asyncio.wait({self._pending}, timeout=timeout)
                if not done:
                    return None
                fut, self._pending = self._pending, None
                data = fut.result()
        except (ConnectionError, OSError):
            data = b""
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    def _fault(self, message: str, resync_from: int = 0, rid: int | str | None = None) -> FramingError:
        log.warning("LSP framing error: %s; skipping to the next message", message)
        self._resync_from = resync_from
        return FramingError(message, rid)

    async def _header_block(self) -> int | FramingError | None:
        """The Content-Length of the header block at the start of the buffer (consumed), a
        FramingError (the offending bytes are skipped by the next call), or None at the end."""
        length: int | None = None
        seen = 0  # bytes of this block consumed so far
        while True:
            nl = self._buf.find(b"\n")
            if nl < 0:
                if len(self._buf) > MAX_HEADER:
                    return self._fault(f"a header line longer than {MAX_HEADER} bytes", 1)
                if not await self._fill():
                    if seen or self._buf.strip():
                        log.error("the client closed the LSP stream in the middle of a message header")
                    return None
                continue
            line = bytes(self._buf[: nl + 1])
            if not line.strip():
                del self._buf[: nl + 1]
                if not seen:
                    continue  # a stray blank line between messages
                if length is None:
                    return self._fault("a message without a Content-Length header")
                return length
            if seen + len(line) > MAX_HEADER:
                return self._fault(f"a header block longer than {MAX_HEADER} bytes", 1)
            m = _HEADER_LINE.fullmatch(line)
            if m is None:
                # Garbage; if a header is glued to it (`...}Content-Length: 52`), that is where
                # the next message starts, found by the resynchronisation from the next byte.
                return self._fault(f"not a message header: {line[:60]!r}", 1)
            del self._buf[: nl + 1]
            seen += len(line)
            if m.group(1).lower() != b"content-length":
                continue  # Content-Type, or a header of a later protocol version
            value = m.group(2)
            if not value.isdigit() or len(value) > 20:
                return self._fault(f"Content-Length is not a number of bytes: {value[:40]!r}")
            n = int(value)
            if n == 0:
                return self._fault("Content-Length 0: an empty message")
            if n > MAX_BODY:
                return self._fault(f"Content-Length {n} is over the {MAX_BODY}-byte limit")
            if length is not None and length != n:
                return self._fault(f"two different Content-Length headers ({length} and {n})")
            length = n

    def _message_start(self, start: int, before: int | None = None) -> int:
        """The offset of the first message start (a `Content-Length: <digits>` line) at or
        after `start` (and before `before`) in the buffer, or -1."""
        i = self._buf.find(_MARK, start)
        while i >= 0 and (before is None or i < before):
            if _START.match(self._buf, i):
                return i
            i = self._buf.find(_MARK, i + 1)
        return -1

    async def _resync(self, start: int) -> bool:
        """Drop bytes up to the next message start; False when the stream ended first."""
        while True:
            i = self._message_start(start)
            if i >= 0:
                del self._buf[:i]
                return True
            # Keep a tail that may be the beginning of a header line cut by the read.
            drop = max(0, len(self._buf) - _START_MAX)
            del self._buf[:drop]
            start = max(0, start - drop)
            if not await self._fill():
                return False

    async def _body(self, n: int) -> bytes | FramingError | None:
        scanned = 0
        while True:
            # The next message's header inside this one's declared length: the Content-Length
            # was longer than the body sent. A header line that straddles the declared end
            # counts too when its rest is already here.
            i = self._message_start(max(0, scanned - _START_MAX), n)
            if i >= 0:
                part = bytes(self._buf[:i])
                del self._buf[:i]
                return self._too_long(n, part)
            if len(self._buf) >= n:
                body = bytes(self._buf[:n])
                del self._buf[:n]
                return body
            scanned = len(self._buf)
            got = await self._fill(timeout=_IDLE_S)
            if got is None and _is_json(self._buf):
                # Nothing more is coming and what came is a whole message: the client waits
                # for an answer to a request whose Content-Length overstated it.
                part = bytes(self._buf)
                self._buf.clear()
                return self._too_long(n, part)
            if got is False:
                log.error(
                    "the client closed the LSP stream %d bytes into a message of %d (Content-Length)",
                    len(self._buf),
                    n,
                )
                return None

    def _too_long(self, n: int, part: bytes) -> FramingError:
        log.warning("LSP framing error: Content-Length %d, but the message ended after %d bytes", n, len(part))
        return FramingError(f"Content-Length {n} is longer than the message ({len(part)} bytes)", _request_id(part))


PARSE_ERROR = -32700


class Dropped:
    """A message already answered with an error: pygls's `handle_message` ignores it (its
    `jsonrpc` is no version it knows)."""

    jsonrpc = "dropped"


class ErrorAnswers:
    """Mixed into a pygls JSON-RPC protocol that `run` reads (the language server's and the owner
    socket's): faults of the stream are answered as JSON-RPC errors, never left unanswered."""

    def send_error(self, rid: int | str | None, code: int, message: str) -> None:
        # A plain dict through pygls's own writer (framed, never interleaved with another
        # message): pygls's response models drop a None id, and JSON-RPC wants `"id": null`.
        error = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
        self._send_data(error)  # type: ignore[attr-defined]

    def framing_error(self, error: FramingError) -> None:
        self.send_error(error.id, PARSE_ERROR, error.message)

    def unreadable(self, error: Exception) -> bool:
        """Unreadable input (malformed or absurdly deep JSON) gets a parse error; whether it was."""
        if not isinstance(error, ValueError | RecursionError):
            return False
        self.send_error(None, PARSE_ERROR, f"cannot parse message: {error}")
        return True


class MessageProtocol(Protocol):
    """What `run` needs of pygls's JSON-RPC protocol."""

    def structure_message(self, data: dict[str, Any]) -> Any: ...

    def handle_message(self, message: Any) -> None: ...


async def run(
    stop_event: threading.Event,
    source: Source,
    protocol: MessageProtocol,
    on_framing_error: Callable[[FramingError], None],
    on_error: Callable[[Exception], None],
) -> None:
    """pygls's `run_async` with our framing: every body is decoded and handed to the protocol
    as pygls does; framing faults and undecodable bodies are reported and the stream goes on."""
    framer = Framer(source)
    try:
        while not stop_event.is_set():
            item = await framer.next()
            if item is None:
                break
            if isinstance(item, FramingError):
                on_framing_error(item)
                continue
            try:
                message = json.loads(item, object_hook=protocol.structure_message)
            except Exception as exc:  # not JSON, too deep, or refused by the protocol's hook
                if isinstance(exc, ValueError | RecursionError):
                    framer.body_was_bad()
                on_error(exc)
                continue
            try:
                protocol.handle_message(message)
            except Exception as exc:  # one message must not end the session
                log.exception("could not handle a message")
                on_error(exc)
    finally:
        framer.close()
