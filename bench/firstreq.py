"""The first requests after `initialized`: spawn the real server on a folder (empty cache), send a
status and two retrieves at once right after `initialized`, then the same again 0.3 s later, and
print each round trip in ms. What an editor's first status poll and first question wait for while
the server's modules still load (docs/history/performance-log.md, "Seventh round").

    .venv/bin/python -m bench.firstreq FOLDER [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.lsp import LspClient

RAGLS = Path(sys.executable).with_name("ragls")


async def once(folder: Path, log: Path) -> list[float]:
    cache = tempfile.mkdtemp(prefix="ragls-firstreq-")
    try:
        client = await LspClient.spawn([str(RAGLS)], {**os.environ, "RAGLS_CACHE_DIR": cache}, log)
        await client.initialize(folder)

        async def status() -> float:
            t0 = time.perf_counter()
            await client.status()
            return (time.perf_counter() - t0) * 1000

        async def retrieve() -> float:
            ms, _ = await client.retrieve("parse the header")
            return ms

        first = await asyncio.gather(status(), retrieve(), retrieve())
        await asyncio.sleep(0.3)
        later = await asyncio.gather(status(), retrieve())
        await client.close()
        return [*first, *later]
    finally:
        shutil.rmtree(cache, ignore_errors=True)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--log", type=Path, default=Path(tempfile.gettempdir()) / "ragls-firstreq.log")
    a = ap.parse_args()
    print("status  retrieve  retrieve | 0.3 s later: status  retrieve   (ms)")
    for _ in range(a.runs):
        print("  ".join(f"{x:7.1f}" for x in await once(a.folder.resolve(), a.log)))


if __name__ == "__main__":
    asyncio.run(main())
