"""LSP harness: the real `ragls` over stdio, driven by pytest-lsp's client. The `start`
fixture is re-exported by tests/conftest.py."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from ragls.frontends.lsp.server import to_plain


class Session:
    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.status_notes: list[dict[str, Any]] = []

        # pygls passes only `params` unless the first argument is named `ls`.
        def on_status(params: Any) -> None:
            self.status_notes.append(to_plain(params))

        client.feature("rag/statusChanged")(on_status)

    @property
    def pid(self) -> int:
        return self.client._server.pid  # type: ignore[union-attr]

    async def request(self, method: str, params: Any) -> Any:
        return to_plain(await self.client.protocol.send_request_async(method, params))

    async def retrieve(self, query: str, **kw: Any) -> dict[str, Any]:
        return await self.request("rag/retrieve", {"query": query, **kw})

    async def status(self) -> dict[str, Any]:
        return await self.request("rag/indexStatus", {})

    async def wait_ready(self, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = await self.status()
            if st["state"] == "ready":
                return st
            assert st["state"] != "error", st
            await asyncio.sleep(0.2)
        raise AssertionError(f"index not ready after {timeout}s: {st}")

    async def eventually(self, check: Callable[[], Awaitable[bool]], timeout: float = 15) -> float:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if await check():
                return time.monotonic() - t0
            await asyncio.sleep(0.1)
        raise AssertionError("condition not met in time")

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_session(), 10)
        finally:
            await self.client.stop()


Starter = Callable[..., Awaitable[Session]]


@pytest_asyncio.fixture
async def start(workspace: Path, cache_dir: Path) -> AsyncIterator[Starter]:
    """Start real servers for a test (default: on the fixture workspace); stops them after."""
    sessions: list[Session] = []

    async def _start(
        root: Path | None = None,
        init: dict[str, Any] | None = None,
        progress: bool = True,
        env: dict[str, str] | None = None,
        folders: list[Path] | None = None,
    ) -> Session:
        """`folders`: a multi-root workspace (workspaceFolders, named by basename); `root` then
        defaults to the first."""
        root = root or (folders[0] if folders else workspace)
        config = ClientServerConfig(
            server_command=[sys.executable, "-m", "ragls"],
            server_env={**os.environ, "RAGLS_CACHE_DIR": str(cache_dir), **(env or {})},
        )
        client = await config.start()
        caps = client_capabilities("visual-studio-code") if progress else types.ClientCapabilities()
        session = Session(client, root)
        await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders or [root]],
                initialization_options=init or {"indexing": {"debounceMs": 50, "openBufferDebounceMs": 50}},
            )
        )
        sessions.append(session)
        return session

    yield _start
    for s in sessions:
        try:
            await s.close()
        except Exception:  # a test may have stopped it already
            pass
