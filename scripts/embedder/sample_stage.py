#!/usr/bin/env python3
"""The pairs of one further training stage: a per-language quota, new packages first.

    python scripts/embedder/sample_stage.py --pairs PAIRS.jsonl --seen-manifest OLD-MANIFEST.json \
        --quota javascript=4000,kotlin=4000,... --default-quota 2000 --replay 0.2 --out STAGE.jsonl

A model that already saw the packages of an earlier data manifest learns most from packages it
has not seen: each language's quota is filled with pairs of new packages, except a `--replay`
share drawn from the packages already seen (so they are not forgotten), spread evenly over
packages (at most as many from one package as from any other, round-robin), with a fixed seed.
Lines are copied unchanged, so mined negatives (mine_negatives.py, keyed by pairkey.pair_key)
still apply. Prints the counts per language and origin.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path


def spread(lines_by_pkg: dict[str, list[str]], n: int, rng: random.Random) -> list[str]:
    """Up to n lines, round-robin over the packages (each shuffled), so one big package
    cannot fill a language's quota alone."""
    queues = []
    for pkg in sorted(lines_by_pkg):
        lines = list(lines_by_pkg[pkg])
        rng.shuffle(lines)
        queues.append(lines)
    rng.shuffle(queues)
    out: list[str] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--seen-manifest", type=Path, required=True, help="data manifest of the data already trained on")
    ap.add_argument("--quota", default="", help="language=pairs,... (others get --default-quota)")
    ap.add_argument("--default-quota", type=int, default=2000)
    ap.add_argument("--replay", type=float, default=0.2, help="share of each quota from packages already seen")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261125)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    quota = {k: int(v) for k, v in (item.split("=") for item in a.quota.split(",") if item)}
    seen = {p["package"] for p in json.loads(a.seen_manifest.read_text(encoding="utf-8"))["packages"]}
    # language -> origin -> package -> lines
    pool: dict[str, dict[str, dict[str, list[str]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for line in a.pairs.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        origin = "seen" if pair["package"] in seen else "new"
        pool[pair["language"]][origin][pair["package"]].append(line)
    chosen: list[str] = []
    counts: Counter[tuple[str, str]] = Counter()
    for lang in sorted(pool):
        want = quota.get(lang, a.default_quota)
        new_avail = sum(len(v) for v in pool[lang]["new"].values())
        replay = min(round(want * a.replay), sum(len(v) for v in pool[lang]["seen"].values()))
        new = spread(pool[lang]["new"], min(new_avail, want - replay), rng)
        old = spread(pool[lang]["seen"], want - len(new), rng)  # replay, topped up when new ones run out
        chosen += new + old
        counts[(lang, "new")] += len(new)
        counts[(lang, "seen")] += len(old)
    rng.shuffle(chosen)
    a.out.write_text("".join(line + "\n" for line in chosen), encoding="utf-8")
    by_lang = {
        lang: {"new": counts[(lang, "new")], "seen": counts[(lang, "seen")]} for lang in sorted({k for k, _ in counts})
    }
    print(json.dumps({"pairs": len(chosen), "by_language": by_lang}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
