"""Peak memory and time of `ragls snapshot import` for a large, valid snapshot.

    python -m bench.snapimport [--vectors 500000] [--names 100000] [--dir DIR] [--keep]

Writes a snapshot of `--vectors` random unit vectors (and `--names` name vectors) of the bundled
model's identity with the real writer, then runs the real CLI, `ragls snapshot import FILE`, on
an empty cache in a child process and reads that child's peak RSS from the kernel (`wait4`'s
`ru_maxrss`). Prints JSON: the file's size, the import's seconds and peak RSS, and their ratio.
The import should stay near a constant (the interpreter, numpy, SQLite's page cache, one batch),
whatever the file's size (issue 51, attack 6a: 2.1 GB for 231 MiB before it was streamed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def make_snapshot(path: Path, vectors: int, names: int) -> int:
    """A valid snapshot of random vectors, written by ragls's own writer; returns its size."""
    import numpy as np

    from ragls.chunking.model import EMBED_FORMAT
    from ragls.embedding.bundled import DIMENSION, model_id
    from ragls.embedding.snapshot import Identity, write

    rng = np.random.default_rng(51)

    def random_items(n: int, salt: int) -> dict[str, np.ndarray]:
        mat = rng.standard_normal((n, DIMENSION), dtype=np.float32)
        mat /= np.linalg.norm(mat, axis=1, keepdims=True)
        return {f"{salt:08x}{i:024x}": mat[i] for i in range(n)}

    write(path, Identity(model_id(), DIMENSION, EMBED_FORMAT), random_items(vectors, 1), random_items(names, 2))
    return path.stat().st_size


def measure_import(snapshot: Path, cache: Path) -> dict[str, float | int]:
    """`ragls snapshot import` in a child process: its seconds, exit code and peak RSS."""
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache)}
    t0 = time.monotonic()
    child = subprocess.Popen(
        [str(REPO / ".venv/bin/ragls"), "snapshot", "import", str(snapshot), str(cache)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    # wait4: this child's own rusage (RUSAGE_CHILDREN would fold in every child of this process).
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - t0
    if child.stderr is not None:
        err = child.stderr.read().decode(errors="replace").strip()
        child.stderr.close()
        if err:
            print(err, file=sys.stderr)
    return {
        "import_s": round(seconds, 2),
        "exit": os.waitstatus_to_exitcode(status),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: kilobytes
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", type=int, default=500_000)
    ap.add_argument("--names", type=int, default=100_000)
    ap.add_argument("--dir", type=Path, default=None, help="where the snapshot and the cache go (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the snapshot and the cache")
    ap.add_argument("--write-only", type=Path, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.write_only is not None:
        make_snapshot(a.write_only, a.vectors, a.names)
        return 0
    base = a.dir or Path(tempfile.mkdtemp(prefix="ragls-snapimport-"))
    base.mkdir(parents=True, exist_ok=True)
    snapshot, cache = base / "random.ragls-snapshot", base / "cache"
    try:
        if not snapshot.is_file():
            # In a process of its own: a child forked from a parent holding the vectors would
            # count the parent's pages in its own peak RSS until it execs.
            sizes = ["--vectors", str(a.vectors), "--names", str(a.names)]
            subprocess.run(
                [sys.executable, "-m", "bench.snapimport", *sizes, "--write-only", str(snapshot)], cwd=REPO, check=True
            )
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(mode=0o700)
        size = snapshot.stat().st_size
        res = measure_import(snapshot, cache)
        print(
            json.dumps(
                {
                    "vectors": a.vectors,
                    "names": a.names,
                    "snapshot_mb": round(size / 2**20, 1),
                    **res,
                    "rss_over_file": round(res["peak_rss_mb"] * 2**20 / size, 2),
                },
                indent=2,
            )
        )
        return 0 if res["exit"] == 0 else 1
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
