"""Malformed, hostile and heavy LSP traffic: every request gets an error or a bounded answer,
and the server stays responsive."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp_harness import Starter
from tests.reliability.conftest import generated_workspace

FUZZ: list[Any] = [
    {"query": 5},
    {"query": None},
    {"query": ["a"]},
    {"query": {"x": 1}},
    {"query": "x" * 100_000},
    {"query": "x", "topK": -5},
    {"query": "x", "topK": 10**12},
    {"query": "x", "topK": "ten"},
    {"query": "x", "maxChars": -1},
    {"query": "x", "maxChars": 10**15},
    {"query": "x", "paths": [1, 2]},
    {"query": "x", "paths": ["**/" * 160]},
    {"query": "x", "paths": ["[" * 400]},
    {"query": "x", "paths": ["a/**"] * 500},
    {"query": "x", "languages": "python"},
    {"query": "x", "paths": ["/etc/**"]},
    {"query": "x", "paths": ["../../**"]},
    {"query": "\x00\ud800"},
    [],
    "query",
    42,
    None,
    {"nested": {"deep": [[[[[[{"query": "x"}]]]]]]}},
]


async def test_fuzzed_params_get_errors_or_bounded_answers(start: Starter) -> None:
    s = await start()
    await s.wait_ready()
    answered = 0
    for params in FUZZ:
        t0 = time.monotonic()
        try:
            res = await asyncio.wait_for(s.request("rag/retrieve", params), 10)
            assert isinstance(res, dict) and len(res.get("context", "")) <= 200_000
        except JsonRpcException as exc:
            assert exc.code in (-32602, -32600, -32700), (params, exc)
        answered += 1
        assert time.monotonic() - t0 < 10
    for params in ([], "x", 42, {"unexpected": True}):
        st = await s.request("rag/indexStatus", params)
        assert st["state"] == "ready"
    assert answered == len(FUZZ)


async def test_200_concurrent_retrieves_during_indexing(start: Starter, tmp_path: Path) -> None:
    ws = generated_workspace(tmp_path / "big", files=60)
    s = await start(root=ws)
    await asyncio.sleep(1.0)
    queries = [s.retrieve(f"validate the session token {i}", topK=5) for i in range(200)]
    t0 = time.monotonic()
    results = await asyncio.wait_for(asyncio.gather(*queries), 120)
    elapsed = time.monotonic() - t0
    assert len(results) == 200 and all("chunks" in r for r in results)
    st = await s.status()
    pid_rss = _server_rss_mb(s)
    assert pid_rss is None or pid_rss < 1500, pid_rss
    print(f"200 concurrent retrieves answered in {elapsed:.2f}s during state={st['state']}, rss={pid_rss} MB")


def _server_rss_mb(s: Any) -> float | None:
    proc = getattr(s.client, "_server", None)
    pid = getattr(proc, "pid", None)
    if not pid or not os.path.exists(f"/proc/{pid}/status"):
        return None
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


async def test_cancel_request(start: Starter) -> None:
    # Sent straight after initialize to a folder indexed before, the request waits for its index
    # to open, so the $/cancelRequest that follows at once reaches it while it is still pending.
    # (A folder never indexed here is answered at once: there is nothing to wait for.)
    first = await start()
    await first.wait_ready()
    await first.close()
    s = await start()
    fut = s.client.protocol.send_request("rag/retrieve", {"query": "invoice total"}, msg_id="cancel-me")
    s.client.protocol.notify("$/cancelRequest", types.CancelParams(id="cancel-me"))
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(asyncio.wrap_future(fut), 30)
    assert info.value.code == -32800  # RequestCancelled
    await s.wait_ready()
    res = await s.retrieve("invoice total")
    assert res["chunks"]


async def test_shutdown_mid_index_is_fast_and_consistent(start: Starter, tmp_path: Path, cache_dir: Path) -> None:
    from ragls.config import Settings
    from ragls.frontends.cli.check import check_index

    ws = generated_workspace(tmp_path / "mid", files=60)
    s = await start(root=ws)
    deadline = time.monotonic() + 60
    while (await s.status())["phase"] != "dense" and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    t0 = time.monotonic()
    await s.client.shutdown_async(None)
    s.client.exit(None)
    await asyncio.wait_for(s.client._server.wait(), 10)  # type: ignore[union-attr]
    took = time.monotonic() - t0
    assert took < 3.0, took  # not the rest of the dense pass (~6 s for these 480 chunks)
    rep = await asyncio.to_thread(check_index, ws, Settings.model_validate({"cacheDir": str(cache_dir)}))
    assert rep.consistent, rep.as_dict()
    print(f"shutdown mid-index took {took:.2f}s; checker: {rep.as_dict()['files_current']} current files")
