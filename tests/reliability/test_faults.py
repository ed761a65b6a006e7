"""Provider and store faults: retries with backoff, failures counted and shown, retrieval
keeps answering; a model or dimension change gets its own index and never mixes vectors."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp_harness import Starter
from tests.unit.fake_providers import FakeProviders, Reply

OLLAMA = "/api/embed"


@pytest.fixture
def fake() -> Iterator[FakeProviders]:
    with FakeProviders(dim=8) as f:
        yield f


class WrongDimensions(FakeProviders):
    def _answer(self, path: str, body: Any) -> Any:
        return super()._answer(path, {**body, "dimensions": 16})


def _ollama(fake: FakeProviders, dim: int = 8) -> dict:
    return {
        "provider": "ollama",
        "baseUrl": fake.url,
        "model": "tiny",
        "dimensions": dim,
        "maxRetries": 1,
        "retryBaseMs": 1,
        "retryMaxMs": 5,
        "timeoutS": 2,
    }


async def test_failing_provider_marks_files_failed_and_chat_keeps_working(
    start: Starter, fake: FakeProviders, fresh_cache: Path
) -> None:
    fake.script(OLLAMA, *[Reply(status=500)] * 400)
    s = await start(
        env={"RAGLS_CACHE_DIR": str(fresh_cache)}, init={"embedder": _ollama(fake), "indexing": {"debounceMs": 50}}
    )
    deadline = time.monotonic() + 90
    st = await s.status()
    while time.monotonic() < deadline:
        st = await s.status()
        if st["state"] == "ready" or st["filesFailed"]:
            break
        time.sleep(0.2)
    assert st["filesFailed"] > 0, st
    assert any("embedding failed" in e["message"] for e in st["errors"]), st
    # Lexical chunks are in place, so chat still gets context, with the degradation said.
    res = await s.retrieve("invoice compute_total", topK=3)
    assert res["chunks"] and res["chunks"][0]["path"] == "billing/invoice.py"
    # Degraded, not failed (protocol 2): `error` stays null, the note is in `warnings`.
    assert res["error"] is None and res["context"], res
    assert any("lexical only" in w for w in res["warnings"]), res
    # The provider recovers; a reindex retries the failed files and the index completes.
    fake.scripts[OLLAMA].clear()
    await s.request("rag/reindex", {})
    st = await s.wait_ready(120)
    assert st["filesFailed"] == 0 and st["filesIndexed"] == st["filesTotal"] == 8


async def test_wrong_dimensions_are_rejected_not_stored(start: Starter, fresh_cache: Path) -> None:
    with WrongDimensions() as wrong:  # answers 16-d vectors to a model configured as 8-d
        s = await start(env={"RAGLS_CACHE_DIR": str(fresh_cache)}, init={"embedder": _ollama(wrong, dim=8)})
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            st = await s.status()
            if st["filesFailed"] or st["state"] == "ready":
                break
            time.sleep(0.2)
        assert st["filesFailed"] > 0 and st["dense"]["done"] == 0, st
        assert st["embedder"]["dimension"] == 8


async def test_model_change_gets_a_new_index(start: Starter, fake: FakeProviders, fresh_cache: Path) -> None:
    env = {"RAGLS_CACHE_DIR": str(fresh_cache)}
    local = await start(env=env)
    st_local = await local.wait_ready()
    await local.close()
    remote = await start(env=env, init={"embedder": _ollama(fake)})
    st_http = await remote.wait_ready(120)
    assert st_http["embedder"]["dimension"] == 8 and st_http["embedder"]["model"] == "ollama:tiny"
    assert st_http["store"]["location"] != st_local["store"]["location"]
    assert st_http["filesIndexed"] == 8
    res = await remote.retrieve("calculate the invoice total including tax", topK=3)
    assert res["chunks"]
    await remote.close()
    back = await start(env=env)
    st_back = await back.wait_ready()
    assert st_back["store"]["location"] == st_local["store"]["location"] and st_back["embedded"] == 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_qdrant_server_is_an_error_state_not_a_crash(start: Starter, fresh_cache: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    s = await start(
        env={"RAGLS_CACHE_DIR": str(fresh_cache)}, init={"qdrant": {"url": url, "preferGrpc": False, "timeoutS": 1}}
    )
    deadline = time.monotonic() + 60
    st = await s.status()
    while st["state"] != "error" and time.monotonic() < deadline:
        time.sleep(0.2)
        st = await s.status()
    assert st["state"] == "error" and "unreachable" in (st["message"] or "") and "retrying" in st["message"]
    res = await s.retrieve("invoice")
    assert res["context"] == "" and res["chunks"] == [] and res["error"]
