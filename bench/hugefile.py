"""One huge file against the server's answers and memory (issue 51, attack 6b).

    python -m bench.hugefile [--lines 1000000] [--source workspace|user] [--dir DIR]

Writes a workspace of one small module and a text file of `--lines` lines (37 MB at 1M), raises
`maxFileBytes` to 50 MB either in the workspace's `.ragls.toml` (`--source workspace`, the
attack: a repository asking for it) or in the user's own settings (`--source user`), starts the
real server on an empty cache and asks `rag/indexStatus` every 20 ms until the index is ready.
Prints JSON: seconds to ready, the status round trips' median, p95 and max (goal: max under
50 ms), the peak RSS of the server and its workers together, and how the file was skipped.
Before the per-file budget: 25k chunks, 1.2 GB, one status answer 3.3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lsp import LspClient, children_rss, proc_status

REPO = Path(__file__).resolve().parent.parent


def write_workspace(root: Path, lines: int, source: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "orders.py").write_text("def order_total(order):\n    return sum(i.price for i in order.items)\n")
    if source == "workspace":
        (root / ".ragls.toml").write_text("maxFileBytes = 50000000\n")
    with (root / "access.txt").open("w") as fh:
        for i in range(0, lines, 1000):
            fh.write("".join(f"{j} GET /api/orders/{j % 977} 200 {j % 53} ms\n" for j in range(i, i + 1000)))


async def measure(root: Path, cache: Path, source: str) -> dict[str, Any]:
    env = {"RAGLS_CACHE_DIR": str(cache), "RAGLS_CONFIG": str(cache / "no-user-config.toml")}
    client = await LspClient.spawn([str(REPO / ".venv" / "bin" / "ragls")], {**os.environ, **env}, cache / "server.log")
    init = {"maxFileBytes": 50_000_000} if source == "user" else {}
    t0 = time.monotonic()
    await client.initialize(root, init)
    rtts: list[float] = []
    peak, st = 0, {}
    while time.monotonic() - t0 < 600:
        a = time.monotonic()
        st = await client.status()
        rtts.append((time.monotonic() - a) * 1000)
        peak = max(peak, proc_status(client.pid).get("VmRSS", 0) + children_rss(client.pid))
        if st.get("state") == "ready":
            break
        await asyncio.sleep(0.02)
    ready_s = time.monotonic() - t0
    peak = max(peak, proc_status(client.pid).get("VmHWM", 0))
    await client.close()
    rtts.sort()
    return {
        "source": source,
        "ready_s": round(ready_s, 2),
        "status_ms": {
            "n": len(rtts),
            "median": round(statistics.median(rtts), 1),
            "p95": round(rtts[int(0.95 * (len(rtts) - 1))], 1),
            "max": round(rtts[-1], 1),
        },
        "peak_rss_mb": round(peak / 1e6),
        "chunks": st.get("chunks"),
        "skipped": st.get("skippedByReason"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--source", choices=["workspace", "user"], default="user")
    ap.add_argument("--dir", type=Path, default=None)
    a = ap.parse_args(argv)
    base = a.dir or Path(tempfile.mkdtemp(prefix="ragls-hugefile-"))
    root, cache = base / "ws", base / "cache"
    cache.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_workspace(root, a.lines, a.source)
    size = (root / "access.txt").stat().st_size
    out = asyncio.run(measure(root, cache, a.source))
    print(json.dumps({"file_mb": round(size / 1e6, 1), "lines": a.lines, **out}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
