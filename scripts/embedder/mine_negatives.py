#!/usr/bin/env python3
"""Mine one hard negative per training pair with the bundled embedder (or another export).

    .venv/bin/python scripts/embedder/mine_negatives.py --pairs ~/.cache/ragls-train/pairs.jsonl \
        --out ~/.cache/ragls-train/negatives.jsonl [--model-dir DIR]

For each (question, code) pair: rank every other code chunk of the same package by the
model's similarity to the question and draw one of the top `--pool` (seeded). Excluded: the
positive itself, a chunk with the same code, and a chunk whose own question is the same
sentence (overloads and copies documented alike are not negatives). `train.py --negatives`
adds them to each batch as extra columns. Output: one JSON line per pair, `key` (sha1 of
question and code, as train.py computes it) and `negative` (the code text).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from pairkey import pair_key, question_text

from ragls.config import EmbedderSettings
from ragls.embedding import onnx_local
from ragls.embedding.base import Embedder


def package_negatives(
    pairs: list[dict[str, str]], embedder: Embedder, pool_size: int, rng: random.Random
) -> dict[str, str]:
    """pair key -> a hard negative drawn from the `pool_size` chunks of these pairs (one
    package) most similar to the pair's question, never its own code or a chunk whose
    question is the same sentence."""
    codes = sorted({pair["code"] for pair in pairs})
    index = {c: i for i, c in enumerate(codes)}
    asked: dict[int, set[str]] = defaultdict(set)
    for pair in pairs:
        asked[index[pair["code"]]].add(pair["query"].lower())
    sims = (
        embedder.embed_documents([question_text(pair["query"]) for pair in pairs]) @ embedder.embed_documents(codes).T
    )
    out: dict[str, str] = {}
    for row, pair in enumerate(pairs):
        pos = index[pair["code"]]
        query = pair["query"].lower()
        pool: list[int] = []
        for col in np.argsort(-sims[row]):
            if col != pos and query not in asked[int(col)]:
                pool.append(int(col))
                if len(pool) == pool_size:
                    break
        if pool:
            out[pair_key(pair["query"], pair["code"])] = codes[rng.choice(pool)]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--model-dir", type=Path, default=None, help="an export (model.onnx, tokenizer.json)")
    p.add_argument("--pool", type=int, default=5, help="draw from this many most similar non-answers")
    p.add_argument("--code-tokens", type=int, default=160, help="as train.py truncates code")
    p.add_argument("--seed", type=int, default=20261123)
    args = p.parse_args()
    if args.model_dir is not None:
        onnx_local.MODEL_DIR = args.model_dir.resolve()
    embedder = onnx_local.LocalOnnxEmbedder(EmbedderSettings(max_tokens=args.code_tokens, batch_size=32))
    rng = random.Random(args.seed)

    by_pkg: dict[str, list[dict[str, str]]] = defaultdict(list)
    seen: set[str] = set()
    for line in args.pairs.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        key = pair_key(pair["query"], pair["code"])
        if key not in seen:
            seen.add(key)
            by_pkg[pair["package"]].append(pair)

    written = 0
    with args.out.open("w", encoding="utf-8") as out:
        for n, (pkg, pairs) in enumerate(sorted(by_pkg.items())):
            for key, neg in package_negatives(pairs, embedder, args.pool, rng).items():
                out.write(json.dumps({"key": key, "negative": neg}) + "\n")
                written += 1
            print(f"[{n + 1}/{len(by_pkg)}] {pkg}: {len(pairs)} pairs", flush=True)
    print(f"{written} negatives -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
