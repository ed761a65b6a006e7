"""Measure `ragls mcp` through a folder's owner: tool-call latency and takeover after kill -9.

    .venv/bin/python scripts/measure_mcp.py [--calls 100] [--takeovers 5] [--workspace DIR]

An owner `ragls mcp` and a client `ragls mcp` run on the same folder (a copy of this repository's
server/ and docs/ by default, in a temporary cache). The client session calls `search_code`
`--calls` times (latency as the MCP client sees it, end to end: SDK client -> client process ->
owner socket -> retrieval -> back); the same calls on the owner's own session give the baseline.
Then, `--takeovers` times: kill -9 the owner, time the client's next `search_code` (the takeover
as an agent sees it) and the time until the new owner reports `ready`; a fresh client joins for
the next round. Prints a JSON report; the last client session's calls and answers are written
to `--transcript` (trimmed) as an agent-style session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ragls.store import workspace_id

REPO = Path(__file__).resolve().parents[1]
QUERIES = [
    "how does the owner hand the index to another process after a crash",
    "where are chunks embedded in the background",
    "split a source file along the syntax tree",
    "reciprocal rank fusion of dense and sparse results",
    "neutralise tags in the rag_context block",
    "which files are skipped as secrets",
    "retry an HTTP embedding request after 429",
    "manifest write-ahead pending chunk ids",
    "SharedIndex.retrieve",
    "watch the workspace for changes with a polling fallback",
]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, round(q * (len(s) - 1)))], 2)


async def open_session(stack: AsyncExitStack, ws: Path, env: dict[str, str]) -> ClientSession:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ragls", "mcp", str(ws)], env=env)
    read, write = await stack.enter_async_context(stdio_client(params, errlog=open(os.devnull, "w")))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def wait_ready(s: ClientSession) -> dict[str, Any]:
    while True:
        st = (await s.call_tool("index_status", {})).structured_content or {}
        if st.get("state") == "ready":
            return st
        await asyncio.sleep(0.2)


async def timed_calls(s: ClientSession, n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        res = await s.call_tool("search_code", {"query": QUERIES[i % len(QUERIES)], "top_k": 5})
        out.append((time.perf_counter() - t0) * 1000)
        assert not res.is_error, res.content
    return out


def owner_pid(cache: Path, ws: Path) -> int:
    return int((cache / "ragls" / "run" / f"{workspace_id(ws)}.lock").read_text().split()[0])


async def transcript(s: ClientSession, path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("index_status", {}),
        ("search_code", {"query": "how does a second ragls process reuse the first one's index?", "top_k": 3}),
        ("find_symbol", {"name": "SharedIndex._take_over"}),
        ("search_code", {"query": "socket permissions", "paths": ["server/**"], "languages": ["python"], "top_k": 2}),
        ("search_code", {"query": "x", "top_k": 500}),
    ]
    lines = []
    for tool, args in calls:
        res = await s.call_tool(tool, args)
        text = res.content[0].text if res.content else ""  # type: ignore[union-attr]
        short = "\n".join(text.splitlines()[:14])
        lines.append(f">>> {tool}({json.dumps(args)})\n<<< isError={res.is_error}\n{short}\n")
    path.write_text("\n".join(lines))


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--takeovers", type=int, default=5)
    ap.add_argument("--workspace", type=Path)
    ap.add_argument("--transcript", type=Path, default=Path("mcp-session.txt"))
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ragls-mcp-"))
    ws = a.workspace or tmp / "ws"
    if a.workspace is None:
        for d in ("server", "docs"):
            shutil.copytree(REPO / d, ws / d, ignore=shutil.ignore_patterns("__pycache__", "model"))
    cache = tmp / "xdg"
    env = {k: v for k, v in os.environ.items() if k != "RAGLS_CACHE_DIR"} | {"XDG_CACHE_HOME": str(cache)}
    report: dict[str, Any] = {"workspace": str(ws), "calls": a.calls}
    async with AsyncExitStack() as stack:
        t0 = time.monotonic()
        owner = await open_session(stack, ws, env)
        st = await wait_ready(owner)
        report["first_index_s"] = round(time.monotonic() - t0, 2)
        report["files"], report["chunks"] = st["filesIndexed"], st["chunks"]
        t0 = time.monotonic()
        client = await open_session(stack, ws, env)
        await wait_ready(client)
        report["client_start_s"] = round(time.monotonic() - t0, 2)
        await timed_calls(owner, 5)  # warm-up both paths
        await timed_calls(client, 5)
        direct = await timed_calls(owner, a.calls)
        via = await timed_calls(client, a.calls)
        report["search_code_ms_owner_direct"] = {"p50": pct(direct, 0.5), "p95": pct(direct, 0.95)}
        report["search_code_ms_through_owner"] = {"p50": pct(via, 0.5), "p95": pct(via, 0.95)}
        rounds = []
        for _ in range(a.takeovers):
            pid = owner_pid(cache, ws)
            t0 = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            res = await client.call_tool("search_code", {"query": QUERIES[0], "top_k": 5})
            first = time.monotonic() - t0
            assert not res.is_error and (res.structured_content or {}).get("chunks"), res.content
            st = await wait_ready(client)
            rounds.append(
                {
                    "first_call_s": round(first, 2),
                    "ready_s": round(time.monotonic() - t0, 2),
                    "reembedded": st["embedded"],
                    "new_owner_is_other_pid": owner_pid(cache, ws) != pid,
                }
            )
            client = await open_session(stack, ws, env)  # the next round's client
            await wait_ready(client)
        report["takeover_after_kill9"] = rounds
        report["takeover_first_call_s_median"] = (
            statistics.median(r["first_call_s"] for r in rounds) if rounds else None
        )
        await transcript(client, a.transcript)
        report["transcript"] = str(a.transcript)
    print(json.dumps(report, indent=2))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
