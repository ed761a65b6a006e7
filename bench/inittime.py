"""Spawn → `initialize` answered, for the installed `ragls` (the start-up figure of issue 19).

    python -m bench.inittime [--runs N] [--root DIR]

Spawns `.venv/bin/ragls` N times on a folder (default: an empty temporary one, with an
empty cache) and prints the median and every sample in seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.lsp import LspClient, cpu_seconds
from bench.run import server_command


async def spawn_to_initialize(root: Path, cache: Path, log: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the server) from spawn to the `initialize` answer. The CPU
    figure is what a shared machine distorts least."""
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache)}
    t = time.monotonic()
    client = await LspClient.spawn(server_command(), env, log)
    await client.initialize(root)
    took = time.monotonic() - t
    cpu = cpu_seconds(client.pid) or 0.0
    await client.close()
    return took, cpu


async def amain(a: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = a.root or Path(tmp) / "ws"
        root.mkdir(exist_ok=True)
        if a.root is None:
            (root / "a.py").write_text("def hello():\n    return 1\n")
        samples = [await spawn_to_initialize(root, Path(tmp) / f"cache{i}", Path(tmp) / "log") for i in range(a.runs)]
    wall = [w for w, _ in samples]
    cpu = [c for _, c in samples]
    print(
        f"spawn -> initialize: wall median {statistics.median(wall):.3f} s, server CPU median "
        f"{statistics.median(cpu):.2f} s; wall {[round(w, 3) for w in wall]}, CPU {cpu}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--root", type=Path, default=None)
    asyncio.run(amain(ap.parse_args()))


if __name__ == "__main__":
    main()
