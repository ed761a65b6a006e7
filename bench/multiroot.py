"""`rag/retrieve` latency with 1 folder vs the same files split over 3 workspace folders.

    python -m bench.multiroot [--rounds 3] [--source server] [--out DIR]

The corpus is this repository's own `--source` tree (offline, fixed by the commit), copied once
as one folder and once dealt file by file over three folders (same files, same total size).
For each layout the real server indexes it over stdio (bench/lsp.py); then every query of
QUERIES is asked `--rounds` times (after one warm-up round) and the client-side round trip is
recorded. Prints JSON: per layout the files, chunks, and round-trip median/p95 in ms. Not part
of `make bench`; the figures are in docs/history/evaluation-log.md ("Multi-root workspaces").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.latprobe import pct
from bench.lsp import LspClient
from bench.run import server_command

REPO = Path(__file__).resolve().parents[1]
QUERIES = [
    "how are the results of several workspace folders fused",
    "owner lock shared between ragls processes",
    "where is the embedding cache stored",
    "reciprocal rank fusion weights",
    "parse a toml settings file and merge the layers",
    "what happens when the embedding provider is down",
    "neutralise rag_context tags in file content",
    "split a python file along the syntax tree",
    "debounce file watcher events",
    "progress percentage of the dense phase",
    "demote test files in the ranking",
    "compile_globs",
    "IndexService.retrieve",
    "status totals over folders",
    "take over the index when the owner dies",
    "secret files are never indexed",
]


def layouts(source: Path, dest: Path) -> dict[str, list[Path]]:
    files = sorted(p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    one = dest / "one" / "all"
    three = [dest / "three" / name for name in ("part-a", "part-b", "part-c")]
    for i, f in enumerate(files):
        rel = f.relative_to(source)
        for target in (one, three[i % 3]):
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target / rel)
    return {"1 folder": [one], "3 folders": three}


async def measure(folders: list[Path], cache: Path, rounds: int, log: Path) -> dict[str, Any]:
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache)}
    client = await LspClient.spawn(server_command(), env, log)
    try:
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folders[0].as_uri(),
                "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
                "capabilities": {},
                "initializationOptions": {"indexing": {"watch": False}},
            },
        )
        client.notify("initialized", {})
        deadline = time.monotonic() + 1800
        while (st := await client.status())["state"] != "ready":
            if time.monotonic() > deadline or st["state"] == "error":
                raise RuntimeError(f"index not ready: {st}")
            await asyncio.sleep(0.5)
        for q in QUERIES:  # warm-up: first query embedding, page cache
            await client.retrieve(q, topK=8)
        times: list[float] = []
        for _ in range(rounds):
            for q in QUERIES:
                ms, res = await client.retrieve(q, topK=8)
                assert res["chunks"] and res["error"] is None, res
                times.append(ms)
        return {
            "folders": len(folders),
            "files": st["filesIndexed"],
            "chunks": st["chunks"],
            "queries": len(times),
            "median_ms": round(pct(times, 50), 1),
            "p95_ms": round(pct(times, 95), 1),
        }
    finally:
        await client.close()


async def main_async(a: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragls-multiroot-") as tmp:
        root = Path(tmp)
        out: dict[str, Any] = {}
        cache = root / "cache"  # shared: both layouts embed each chunk once
        for name, folders in layouts(REPO / a.source, root / "ws").items():
            out[name] = await measure(folders, cache, a.rounds, Path(a.out) / "multiroot-server.log")
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--source", default="server", help="folder of this repository used as the corpus")
    ap.add_argument("--out", default="bench-results")
    a = ap.parse_args()
    Path(a.out).mkdir(parents=True, exist_ok=True)
    print(json.dumps(asyncio.run(main_async(a)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
