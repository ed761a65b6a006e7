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
import hashlib
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from ragls.config import EmbedderSettings
from ragls.embedding import onnx_local

_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # as train.py and ragls embed questions


def pair_key(query: str, code: str) -> str:
    return hashlib.sha1(f"{query.lower()}\0{code}".encode()).hexdigest()


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
            if len(pairs) < 2:
                continue
            codes = sorted({pair["code"] for pair in pairs})
            index = {c: i for i, c in enumerate(codes)}
            # Questions per code chunk, so a chunk documented by the same sentence is never a negative.
            asked: dict[int, set[str]] = defaultdict(set)
            for pair in pairs:
                asked[index[pair["code"]]].add(pair["query"].lower())
            cvec = embedder.embed_documents(codes)
            qvec = embedder.embed_documents([_HUMP.sub(" ", pair["query"]) for pair in pairs])
            sims = qvec @ cvec.T
            for row, pair in enumerate(pairs):
                pos = index[pair["code"]]
                query = pair["query"].lower()
                pool: list[int] = []
                for col in np.argsort(-sims[row]):
                    if col != pos and query not in asked[int(col)]:
                        pool.append(int(col))
                        if len(pool) == args.pool:
                            break
                if pool:
                    neg = codes[rng.choice(pool)]
                    out.write(json.dumps({"key": pair_key(pair["query"], pair["code"]), "negative": neg}) + "\n")
                    written += 1
            print(f"[{n + 1}/{len(by_pkg)}] {pkg}: {len(pairs)} pairs, {len(codes)} chunks", flush=True)
    print(f"{written} negatives -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
