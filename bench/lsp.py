"""A minimal LSP client over stdio: enough to drive the real `ragls` server and time it.

It speaks JSON-RPC 2.0 with Content-Length framing, answers every server-to-client request
with a null result (the benchmark declares no optional client capabilities, so the server asks
for nothing it needs), and keeps every `rag/statusChanged` notification with its arrival time.
A hand-written client keeps the measured path short: no pygls converters on the client side.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any


class LspError(RuntimeError):
    pass


class LspClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pid = proc.pid
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.status_notes: list[tuple[float, dict[str, Any]]] = []  # (monotonic time, IndexStatus)
        self.status_event = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        self.closed = False

    @classmethod
    async def spawn(cls, command: list[str], env: dict[str, str], stderr_path: Path) -> LspClient:
        stderr = stderr_path.open("ab")
        try:
            proc = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=env,
                limit=64 * 1024 * 1024,
            )
        finally:
            stderr.close()  # the child holds its own descriptor
        return cls(proc)

    # -- framing -------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read_message(self) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        length = None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value.strip())
        if length is None:
            raise LspError("message without Content-Length")
        body = await self.proc.stdout.readexactly(length)
        return json.loads(body)

    async def _read_loop(self) -> None:
        try:
            while True:
                msg = await self._read_message()
                if msg is None:
                    break
                if "id" in msg and "method" not in msg:
                    fut = self._pending.pop(msg["id"], None)
                    if fut is not None and not fut.done():
                        if "error" in msg:
                            fut.set_exception(LspError(f"{msg['error'].get('code')}: {msg['error'].get('message')}"))
                        else:
                            fut.set_result(msg.get("result"))
                elif "id" in msg:  # a request from the server: answer it, we support nothing optional
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                elif msg.get("method") == "rag/statusChanged":
                    self.status_notes.append((time.monotonic(), msg.get("params") or {}))
                    self.status_event.set()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.closed = True
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(LspError("server closed the connection"))
            self._pending.clear()

    # -- API -----------------------------------------------------------------------------------
    async def request(self, method: str, params: Any = None, timeout: float = 120) -> Any:
        if self.closed:
            raise LspError("server closed the connection")
        self._next_id += 1
        rid = self._next_id
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._pending.pop(rid, None)

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self, root: Path, init_options: dict[str, Any] | None = None) -> float:
        """initialize + initialized; returns the monotonic time `initialized` was sent."""
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {},
                "initializationOptions": init_options or {},
            },
        )
        t = time.monotonic()
        self.notify("initialized", {})
        return t

    async def retrieve(self, query: str, **kw: Any) -> tuple[float, dict[str, Any]]:
        """(client-side round trip in ms, result)."""
        t0 = time.perf_counter()
        res = await self.request("rag/retrieve", {"query": query, **kw})
        return (time.perf_counter() - t0) * 1000, res

    async def status(self) -> dict[str, Any]:
        return await self.request("rag/indexStatus", {})

    async def close(self, timeout: float = 30) -> None:
        """shutdown + exit, then make sure the process is gone."""
        with contextlib.suppress(Exception):
            if not self.closed:
                await self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
                assert self.proc.stdin is not None
                self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.kill()
            await self.proc.wait()
        self._reader.cancel()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()


def proc_status(pid: int) -> dict[str, int]:
    """VmHWM / VmRSS of a process in bytes (Linux), {} when it is gone."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


def children_rss(pid: int) -> int:
    """Sum of the RSS of a process's children (the server's lexical worker processes), bytes."""
    total = 0
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for t in tasks:  # a child belongs to the thread that started it
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{t}/children", encoding="ascii") as fh:
            kids.extend(int(x) for x in fh.read().split())
    for k in kids:
        total += proc_status(k).get("VmRSS", 0)
    return total


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time the process has used so far."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks
    except (OSError, IndexError, ValueError):
        return None
