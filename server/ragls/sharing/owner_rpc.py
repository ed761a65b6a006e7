"""The index API (sharing/api.py) over the owner socket, on pygls's JSON-RPC machinery.

Each connection, on either end, is a `pygls.protocol.JsonRPCProtocol`: pygls keeps the request
ids, matches answers to requests, runs the handlers and writes results and errors with the
JSON-RPC codes; ragls's LSP framing (system/stdio.py: Content-Length headers, a parse error and
resynchronisation on a malformed header, the 64 MiB cap) reads the stream. The owner
(`OwnerServer`) registers one handler per method of the table, validates params by the method's
pydantic model and answers from its `LocalIndex` in a pool of 8 threads, so one connection's
requests are answered concurrently. A client process's `OwnerProxy` is an `IndexApi` whose
`call` sends the request and reads the answer back into the method's result model.

The protocol class lives in sharing/owner_protocol.py and is imported on a process's first connection:
pygls and the lsprotocol types it loads cost ~0.6 s of CPU, which a `ragls search` that serves a
socket nobody connects to never pays.

Both ends run on one event loop per process, in the thread `ragls-owner-rpc`, whatever the front
end (the LSP's loop, the MCP SDK's, none in the CLI). The socket is 0600 in a 0700 folder and
each end refuses a peer of another uid (owner.trusted_peer).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import os
import socket
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ragls.sharing.api import LOCAL, METHODS, IndexApi, InvalidParams, Method, parse_params
from ragls.sharing.owner import trusted_peer
from ragls.system.foreground import FOREGROUND

if TYPE_CHECKING:
    from ragls.sharing.owner_protocol import OwnerProtocol

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602

_READ_LIMIT = 1 << 20  # the stream buffer at which reading pauses (the framer reads in chunks)
_DRAIN_S = 60.0  # a client that half-closed after its last request still gets these answers

T = TypeVar("T")
# The owner's answer to one request: (method, params, the connection's id) -> the result model.
Answer = Callable[[Method, BaseModel, str], BaseModel]


class OwnerGone(ConnectionError):
    """The owner closed the connection or could not be reached."""


class RemoteError(RuntimeError):
    """The owner answered with a JSON-RPC error other than invalid params."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# -- one event loop per process for every owner connection -------------------------------------

_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: threading.Thread | None = None
_loop_lock = threading.Lock()


def rpc_loop() -> asyncio.AbstractEventLoop:
    """The loop of the `ragls-owner-rpc` thread, started on first use."""
    global _loop, _loop_thread
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            _loop_thread = threading.Thread(target=loop.run_forever, name="ragls-owner-rpc", daemon=True)
            _loop_thread.start()
            _loop = loop
        return _loop


def _on_loop(coro: Coroutine[Any, Any, T], timeout: float) -> T:
    """Run `coro` on the rpc loop from another thread and wait for its result."""
    if threading.current_thread() is _loop_thread:
        raise RuntimeError("a blocking owner-socket call on the owner-socket loop")
    fut = asyncio.run_coroutine_threadsafe(coro, rpc_loop())
    try:
        return fut.result(timeout)
    except concurrent.futures.TimeoutError:
        fut.cancel()
        raise TimeoutError(f"no answer within {timeout:.0f}s") from None


# -- the owner's end ---------------------------------------------------------------------------


class OwnerServer:
    """Serves the index API on the folder's socket: `answer` gives the result of each request
    (the owner's `LocalIndex.call`), `on_disconnect` hears of each connection that ends (its
    buffers revert)."""

    def __init__(self, path: Path, answer: Answer, on_disconnect: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._answer = answer
        self._on_disconnect = on_disconnect or (lambda _cid: None)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="ragls-owner")
        self._ids = itertools.count(1)
        self._conns: set[asyncio.StreamWriter] = set()
        self._server: asyncio.AbstractServer | None = None
        self._closing = False
        self._serving: set[asyncio.Task[Any]] = set()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket left by a killed owner; we hold the lock, so it is stale
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.bind(str(path))
            os.chmod(path, 0o600)
            self._sock.listen(64)
        except OSError:
            self._sock.close()
            raise

    def start(self) -> None:
        async def start() -> None:
            self._server = await asyncio.start_unix_server(self._serve, sock=self._sock, limit=_READ_LIMIT)

        _on_loop(start(), 10)

    def close(self) -> None:
        """Stop serving; every client sees its connection close at once (and takes over)."""

        async def close() -> None:
            self._closing = True
            if self._server is not None:
                self._server.close()
            else:
                self._sock.close()
            for w in list(self._conns):
                w.transport.abort()
            if self._serving:  # each connection's task ends with its connection
                await asyncio.wait(list(self._serving), timeout=2)

        with contextlib.suppress(Exception):
            _on_loop(close(), 5)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not trusted_peer(writer.get_extra_info("socket")):
            log.warning("refused a connection from another user")
            writer.transport.abort()
            return
        cid = f"client-{next(self._ids)}"
        if (task := asyncio.current_task()) is not None:
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)
        from ragls.sharing.owner_protocol import OwnerProtocol, read  # pygls: on the first connection

        protocol = OwnerProtocol()
        protocol.set_writer(writer)  # type: ignore[arg-type]
        for method in METHODS.values():
            protocol.fm.feature(method.name)(self._handler(method, cid))
        self._conns.add(writer)
        try:
            await read(reader, protocol)
            # The client may have half-closed after its last request: answer what it sent.
            inflight = [f for f in protocol._request_futures.values() if isinstance(f, asyncio.Future)]
            if inflight and not self._closing:
                await asyncio.wait(inflight, timeout=_DRAIN_S)
        finally:
            self._conns.discard(writer)
            writer.close()
        if self._closing:  # the index stops as well: nothing to revert
            return
        try:
            await asyncio.get_running_loop().run_in_executor(self._pool, self._on_disconnect, cid)
        except Exception:
            log.exception("cleaning up after a client failed")

    def _handler(self, method: Method, cid: str) -> Callable[[Any], Coroutine[Any, Any, Any]]:
        def run(params: BaseModel) -> BaseModel:
            if method.foreground:  # a question from a client process: the indexer's writes wait
                with FOREGROUND.request():
                    return self._answer(method, params, cid)
            return self._answer(method, params, cid)

        from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

        async def handle(raw: Any) -> Any:
            try:
                params = parse_params(method, raw)
                result = await asyncio.get_running_loop().run_in_executor(self._pool, run, params)
            except InvalidParams as exc:
                raise JsonRpcInvalidParams(str(exc)) from exc
            except Exception as exc:  # a failing request must not take the owner down
                log.exception("owner request %s failed", method.name)
                raise JsonRpcInternalError(f"{type(exc).__name__}: {exc}") from exc
            return result.model_dump(by_alias=True)

        return handle


# -- a client process's end --------------------------------------------------------------------


class OwnerProxy(IndexApi):
    """The index API of the folder's owner, over its socket. `call` is thread-safe; `on_lost`
    runs (on the rpc loop) once the connection ends, whatever the reason, unless `close` ended it."""

    def __init__(self, path: Path, on_lost: Callable[[], None] | None = None, timeout: float = 2.0) -> None:
        self._on_lost = on_lost
        self._gone = False  # touched on the rpc loop only
        self.closed = False
        self._ids = itertools.count(1)
        from ragls.sharing.owner_protocol import OwnerProtocol

        self._protocol: OwnerProtocol = OwnerProtocol()
        self._writer: asyncio.StreamWriter | None = None
        self._reading: asyncio.Task[None] | None = None
        try:
            _on_loop(self._connect(path, timeout), timeout + 5)
        except TimeoutError as exc:
            raise TimeoutError(f"cannot connect to the owner socket {path}") from exc

    async def _connect(self, path: Path, timeout: float) -> None:
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path), limit=_READ_LIMIT), timeout)
        if not trusted_peer(writer.get_extra_info("socket")):
            writer.transport.abort()
            raise PermissionError("the owner socket belongs to another user")
        self._writer = writer
        self._protocol.set_writer(writer)  # type: ignore[arg-type]
        self._reading = asyncio.get_running_loop().create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        from ragls.sharing.owner_protocol import read

        try:
            await read(reader, self._protocol)
        finally:
            self._lost()

    def _lost(self) -> None:
        if self._gone:
            return
        self._gone = self.closed = True
        futures = self._protocol._request_futures
        for fut in list(futures.values()):
            if not fut.done():
                fut.set_exception(OwnerGone("the owner went away"))
        futures.clear()
        if self._writer is not None:
            self._writer.transport.abort()
        if self._on_lost is not None:
            self._on_lost()

    def _send(self, name: str, params: dict[str, Any], rid: int, answer: concurrent.futures.Future[Any]) -> None:
        """On the rpc loop: send the request; its answer (or OwnerGone) completes `answer`."""
        if self._gone:
            answer.set_exception(OwnerGone("the owner connection is closed"))
            return

        def done(f: concurrent.futures.Future[Any]) -> None:
            if answer.done():
                return
            if (exc := f.exception()) is not None:
                answer.set_exception(exc)
            else:
                answer.set_result(f.result())

        self._protocol.send_request(name, params, msg_id=rid).add_done_callback(done)

    def _forget(self, rid: int) -> None:
        self._protocol._request_futures.pop(rid, None)
        self._protocol._result_types.pop(rid, None)

    def call(self, method: Method, params: BaseModel, source: str = LOCAL, timeout: float | None = None) -> Any:
        """The owner's answer as the method's result model. Raises OwnerGone (the connection
        ended), TimeoutError, InvalidParams (the owner refused the params) or RemoteError.
        `source` is this connection, whatever is passed."""
        from pygls.exceptions import JsonRpcException  # loaded with the connection's protocol

        timeout = method.timeout if timeout is None else timeout
        if self.closed:
            raise OwnerGone("the owner connection is closed")
        rid = next(self._ids)
        raw = params.model_dump(by_alias=True, exclude_unset=True)  # unset: the owner's settings apply
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        rpc_loop().call_soon_threadsafe(self._send, method.name, raw, rid, answer)
        try:
            result = answer.result(timeout)
        except concurrent.futures.TimeoutError:
            rpc_loop().call_soon_threadsafe(self._forget, rid)
            raise TimeoutError(f"the owner did not answer {method.name} within {timeout:.0f}s") from None
        except JsonRpcException as exc:
            if exc.code == INVALID_PARAMS:
                raise InvalidParams(exc.message) from exc
            raise RemoteError(exc.code, exc.message) from exc
        return method.result.model_validate(result)

    def close(self) -> None:
        self._on_lost = None

        async def close() -> None:
            self._lost()
            if self._reading is not None:
                with contextlib.suppress(Exception):  # the reader ends with the connection
                    await asyncio.wait_for(self._reading, 2)

        with contextlib.suppress(Exception):
            _on_loop(close(), 5)
