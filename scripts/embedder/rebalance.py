#!/usr/bin/env python3
"""A language-balanced subset of the training pairs, for a further stage on the weakest languages.

    python scripts/embedder/rebalance.py --pairs ~/.cache/ragls-train/pairs.jsonl \
        --weak kotlin,tsx,csharp,rust --out ~/.cache/ragls-train/pairs-stage5.jsonl

Every pair of the `--weak` languages (the held-out split's lowest MRR@10 with the stage-4 model)
plus as many pairs again drawn evenly from the other languages (replay, so they are not
forgotten), with a fixed seed. Lines are copied unchanged, so the mined negatives
(mine_negatives.py, keyed by pairkey.pair_key) still apply. Prints the counts per language.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--weak", required=True, help="comma-separated languages taken in full")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261124)
    a = ap.parse_args()
    weak = {w.strip() for w in a.weak.split(",") if w.strip()}
    rng = random.Random(a.seed)
    by_lang: dict[str, list[str]] = defaultdict(list)
    for line in a.pairs.read_text(encoding="utf-8").splitlines():
        by_lang[json.loads(line)["language"]].append(line)
    chosen = [line for lang in sorted(weak) for line in by_lang.get(lang, [])]
    others = sorted(set(by_lang) - weak)
    per_other = len(chosen) // max(1, len(others))
    for lang in others:
        lines = by_lang[lang]
        chosen += rng.sample(lines, min(per_other, len(lines)))
    rng.shuffle(chosen)
    a.out.write_text("".join(line + "\n" for line in chosen), encoding="utf-8")
    counts = Counter(json.loads(line)["language"] for line in chosen)
    print(json.dumps({"pairs": len(chosen), "by_language": dict(counts.most_common())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
