"""Multi-root fusion against one index, on the dev golden sets (issue 16).

    RAGLS_CACHE_DIR=DIR .venv/bin/python eval/multiroot_fusion.py [--golden ~/.cache/ragls-eval]
        [--projects mobx,go-cmp,...] [--parts 3]

Each project's files are dealt into `--parts` folders (contiguous runs of the sorted paths, so
directories mostly stay together) and each folder is indexed alone, as a multi-root workspace
does. Every golden query is then answered three ways, top 10:

- one index of the whole project (what a single-folder workspace gets);
- `answer.fuse` over the folders' answers: the server's fusion (merge by each folder's own
  weighted-RRF scores, ties to the chunk with more query terms, named definitions first);
- the same merge with ties broken by rank and workspace order only (the first version);
- plain reciprocal-rank fusion of the folders' lists, 1/(60 + rank): the textbook alternative.

Prints recall@10 and MRR@10 per project and their means. Dev sets only: this backs a design
choice (docs/protocol.md, "Several folders, one ranking").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ragls.config import Settings
from ragls.evaluation.golden import GoldenQuery, load_golden
from ragls.evaluation.metrics import Hit, mrr_at_k, recall_at_k
from ragls.index.worker import Indexer
from ragls.protocol import ChunkOut, RetrieveResultOut
from ragls.query.answer import answer, fuse

DEV = "mobx,go-cmp,logrus,cordova-android,unitask,cmarkgfm,thor,guzzle-psr7,spdlog,react-native-paper"
K = 10


def hits(chunks: list[ChunkOut]) -> list[Hit]:
    return [Hit(c.path, c.range.start.line + 1, c.range.end.line) for c in chunks]


def plain_rrf(parts: list[RetrieveResultOut], k: int = 60) -> list[ChunkOut]:
    ranked = [(1 / (k + rank), order, c) for order, res in enumerate(parts) for rank, c in enumerate(res.chunks)]
    ranked.sort(key=lambda t: (-t[0], t[1]))
    return [c for *_, c in ranked]


def rank_ties(parts: list[RetrieveResultOut]) -> list[ChunkOut]:
    """The merge without the query-term tie-break: ties by rank, then folder order."""
    ranked = []
    for order, res in enumerate(parts):
        best = float("-inf")
        for rank in range(len(res.chunks) - 1, -1, -1):
            best = max(best, res.chunks[rank].score)
            ranked.append((best, rank, order, res.chunks[rank]))
    ranked.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [c for *_, c in ranked]


def open_index(root: Path, settings: Settings) -> Indexer:
    idx = Indexer(root, settings)
    idx.start()
    idx.handle.ready.wait()
    if idx.handle.fatal:
        raise RuntimeError(idx.handle.fatal)
    while idx.busy():
        time.sleep(0.2)
    return idx


def run(golden: Path, parts: int, tmp: Path) -> dict[str, float]:
    gs = load_golden(golden)
    root = gs.root_dir()
    files = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    folders = [tmp / gs.name / f"part-{i}" for i in range(parts)]
    for i, rel in enumerate(files):
        dest = folders[i * parts // len(files)] / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dest)
    settings = Settings()
    rs = settings.retrieval
    whole = open_index(root, settings)
    split = [open_index(f, settings) for f in folders]
    scores = {
        "one index": [0.0, 0.0],
        "answer.fuse": [0.0, 0.0],
        "plain RRF k=60": [0.0, 0.0],
        "merge, rank ties": [0.0, 0.0],
    }
    try:
        q: GoldenQuery
        for q in gs.queries:
            single = answer(whole, rs, root, q.query, K, 0).chunks
            per = [answer(idx, rs, f, q.query, K, 0) for idx, f in zip(split, folders, strict=True)]
            fused = fuse([(f.name, f.as_uri(), res) for f, res in zip(folders, per, strict=True)], q.query, K, 0)
            for label, chunks in (
                ("one index", single),
                ("answer.fuse", fused.chunks),
                ("plain RRF k=60", plain_rrf(per)),
                ("merge, rank ties", rank_ties(per)),
            ):
                h = hits(chunks)[:K]
                scores[label][0] += recall_at_k(h, q, K)
                scores[label][1] += mrr_at_k(h, q, K)
    finally:
        for idx in [whole, *split]:
            idx.stop()
    n = len(gs.queries)
    return {f"{label} {m}": round(v[i] / n, 3) for label, v in scores.items() for i, m in enumerate(("R@10", "MRR"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--golden", default=str(Path.home() / ".cache" / "ragls-eval"))
    ap.add_argument("--projects", default=DEV)
    ap.add_argument("--parts", type=int, default=3)
    a = ap.parse_args()
    if "RAGLS_CACHE_DIR" not in os.environ:
        print("set RAGLS_CACHE_DIR (a copy of the eval cache keeps embeddings warm)", file=sys.stderr)
        return 2
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="ragls-fusion-") as tmp:
        for name in a.projects.split(","):
            rows[name] = run(Path(a.golden) / name / "golden.json", a.parts, Path(tmp))
            print(name, json.dumps(rows[name]), file=sys.stderr, flush=True)
    keys = next(iter(rows.values())).keys()
    rows["mean"] = {k: round(sum(r[k] for r in rows.values()) / len(rows), 3) for k in keys}
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
