"""The source lexicon of long change requests (index/source_lexicon.py) at scale: its build time,
the anonymous memory it keeps and its ranking latency, on a benchmark workspace's index.

    python -m bench.lexicon [--workspace files10k]

Opens the workspace's index in the benchmark cache (built by `make bench`; a warm open, nothing
embedded), reads its non-test source chunks into the lexicon once, and ranks files for a bug
report 20 times. Memory is the process's RssAnon (file-backed pages of the shard are the page
cache's) after a garbage collection and malloc_trim, against the same before the build.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time

from bench.corpus import default_cache
from ragls.config import load_settings
from ragls.evaluation.runner import idle_index
from ragls.index.source_lexicon import SourceLexicon
from ragls.system import memory

REPORT = (
    "Crash when parsing a config file with an empty section header\n\n"
    "Steps: create a file with [] then load it; the parser raises IndexError in read_section\n"
    "instead of a clear error message. Expected a ConfigError naming the line.\n"
)


def anon_mb() -> float:
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("RssAnon"):
                return int(line.split()[1]) / 1024
    return 0.0


def settled_mb() -> float:
    gc.collect()
    memory.trim(force=True)
    return anon_mb()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workspace", default="files10k")
    a = p.parse_args()
    cache = default_cache()
    ws = cache / "workspaces" / a.workspace
    if not ws.is_dir():
        raise SystemExit(f"no benchmark workspace at {ws}: run `make bench` first")
    settings = load_settings(
        None, ("bench", {"cacheDir": str(cache / "runs" / a.workspace), "indexing": {"watch": False}})
    )
    idx = idle_index(ws, settings)
    try:
        before = settled_mb()
        lex = SourceLexicon(lambda: idx.handle.store, lambda: 0)
        t0 = time.monotonic()
        built = lex.build()
        took = time.monotonic() - t0
        kept = settled_mb() - before
        ms = []
        for _ in range(20):
            t = time.perf_counter()
            lex.rank(REPORT, 50)
            ms.append((time.perf_counter() - t) * 1000)
        out = {
            "workspace": a.workspace,
            "source_chunks": len(built.index.documents) if built else 0,
            "build_s": round(took, 1),
            "kept_anon_mb": round(kept, 1),
            "rank_ms": {"p50": round(statistics.median(ms), 2), "max": round(max(ms), 2)},
        }
        print(json.dumps(out))
    finally:
        idx.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
