#!/usr/bin/env python3
"""The frozen side of the query encoder's training: each training code chunk embedded once by the
bundled document graph, exactly as the indexer embeds it (int8 ONNX, 256 tokens), with its name
vector (ragls.index.name_rerank), for train_query_gpu.py --vectors.

    .venv/bin/python scripts/embedder/code_vectors.py --pairs pairs.jsonl --per-package 150 \
        --out vectors.npz

On a CPU the whole build (128k chunks) takes hours; `--per-package` keeps a seeded sample of each
package's pairs (all of a small package's), so the siblings a question must be told apart from
stay together. Writes the chosen pairs' line numbers, the unique codes' sha1 and both matrices.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from ragls.config import EmbedderSettings
from ragls.embedding.onnx_local import LocalOnnxEmbedder


def name_line(code: str) -> str:
    """The first two lines of a chunk's embedding text: its qualified symbol and the
    definition's first line, what chunking.model.name_text pools for the name rerank."""
    return "\n".join(code.split("\n")[:2])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--per-package", type=int, default=150)
    p.add_argument("--seed", type=int, default=20261128)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    rows = [json.loads(line) for line in args.pairs.open(encoding="utf-8") if line.strip()]
    by_pkg: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_pkg[row["package"]].append(i)
    rng = random.Random(args.seed)
    chosen: list[int] = []
    for pkg in sorted(by_pkg):
        idx = by_pkg[pkg]
        chosen.extend(sorted(rng.sample(idx, min(len(idx), args.per_package))))
    codes = sorted({rows[i]["code"] for i in chosen})
    print(f"{len(chosen)} pairs of {len(by_pkg)} packages, {len(codes)} codes", flush=True)
    emb = LocalOnnxEmbedder(EmbedderSettings(threads=args.threads))
    vecs = np.zeros((len(codes), emb.dimension), dtype=np.float32)
    names = np.zeros_like(vecs)
    t0 = time.monotonic()
    done = 0
    for start in range(0, len(codes), 256):
        part = codes[start : start + 256]
        for group in emb.batches(part):
            v, n = emb.embed_with_names([part[k] for k in group], [name_line(part[k]) for k in group])
            vecs[[start + k for k in group]] = v
            names[[start + k for k in group]] = n
        done += len(part)
        if start % 2560 == 0:
            rate = done / max(1e-9, time.monotonic() - t0)
            print(f"{done}/{len(codes)} codes, {rate:.1f}/s", flush=True)
    np.savez(
        args.out,
        pairs=np.array(chosen, dtype=np.int64),
        code_sha1=np.array([hashlib.sha1(c.encode()).hexdigest() for c in codes]),
        vectors=vecs,
        names=names,
    )
    print(f"wrote {args.out} in {time.monotonic() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
