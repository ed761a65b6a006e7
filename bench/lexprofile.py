"""Profile the lexical pass in-process: time to all-lexical, peak RSS, and (optionally) where
the Python heap goes, with tracemalloc.

    python -m bench.lexprofile WORKSPACE [--tracemalloc] [--top 25]

Runs ragls's `Indexer` on WORKSPACE with a fresh cache (a temporary RAGLS_CACHE_DIR) and
stops when every discovered file is lexical (before any dense work). Attach py-spy to it for
the time profile: `py-spy record --format raw -o OUT -- python -m bench.lexprofile WS`, then
`python -m bench.lexprofile --stacks OUT` sums the samples by stage.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

# Stages of the lexical pass, by the function a py-spy stack passes through (first match,
# most specific first).
STAGES = [
    ("discover", "discover ("),
    ("read + hash", "read_source ("),
    ("secret scan", "scan (ragls/ingest/secrets.py"),
    ("parse + chunk (tree-sitter)", "chunk_file ("),
    ("sparse vector (tokenize + BM25)", "sparse_vector ("),
    ("payload + id", "_payload ("),
    ("payload + id", "chunk_id ("),
    ("embedding cache lookup", "get_many ("),
    ("store upsert", "upsert ("),
    ("store delete", "delete ("),
    ("manifest", "manifest.py"),
    ("worker pool wait / IPC", "_pool_results ("),
]


def stacks(path: Path) -> None:
    """Sum py-spy raw (collapsed) stacks of the indexer thread by stage."""
    per: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if "ragls/index/" not in stack:  # the indexer's thread: ragls/index/worker.py and its parts
            continue
        total += int(n)
        for name, needle in STAGES:
            if needle in stack:
                per[name] += int(n)
                break
        else:
            per["other"] += int(n)
    for name, n in per.most_common():
        print(f"{name:40s} {n:7d} samples {100 * n / max(total, 1):5.1f} %")
    print(f"{'total (indexer thread)':40s} {total:7d}")


def vm(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) // 1024
    return 0


def run(root: Path, use_tracemalloc: bool, top: int) -> None:
    cache = tempfile.mkdtemp(prefix="ragls-lexprofile-")
    os.environ["RAGLS_CACHE_DIR"] = cache
    if use_tracemalloc:
        import tracemalloc

        tracemalloc.start(1)
    from ragls.config import Settings
    from ragls.index.worker import Indexer

    idx = Indexer(root, Settings())
    t0 = time.monotonic()
    idx.start()
    while True:
        time.sleep(0.2)
        st = idx.snapshot()
        if st.phase in ("dense", "idle") and st.lexical.done >= st.lexical.total > 0:
            break
    took = time.monotonic() - t0
    print(f"all lexical: {st.lexical.done} files, {st.chunks} chunks in {took:.1f} s")
    print(f"RSS {vm('VmRSS')} MB, peak {vm('VmHWM')} MB")
    if use_tracemalloc:
        import tracemalloc

        snap = tracemalloc.take_snapshot()
        cur, peak = tracemalloc.get_traced_memory()
        print(f"python heap (tracemalloc): now {cur / 2**20:.1f} MB, peak {peak / 2**20:.1f} MB")
        for s in snap.statistics("lineno")[:top]:
            print(f"{s.size / 2**20:8.2f} MB {s.count:9d} blocks  {s.traceback[0]}")
    idx.stop(timeout=30)
    import shutil

    shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("workspace", type=Path, nargs="?")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--stacks", type=Path, help="summarise a py-spy raw profile instead")
    a = ap.parse_args()
    if a.stacks:
        stacks(a.stacks)
        return
    if a.workspace is None:
        sys.exit("a workspace is needed")
    run(a.workspace.resolve(), a.tracemalloc, a.top)


if __name__ == "__main__":
    main()
