#!/usr/bin/env python3
"""One GPU run of the embedder's change-description stage: the bundled model fine-tuned on
(commit message, code it changed) pairs, kept close to itself on code (docs/embedding-model.md).

    python3 scripts/embedder/train_gpu.py --pairs pairs.jsonl.xz --val val.jsonl.xz \
        --base-config DIR --out OUT --minutes 6

Made for the `device` machine (one GPU, torch, transformers, onnx, onnxruntime; no network), and
runs on a CPU too (for a smoke test with --limit). The starting weights are the bundled int8
graph's, recovered by dequantize.py (the fine-tuned float weights of earlier stages live only on
the machine that trained them); `--base-config` holds the base model's config and tokenizer.

Loss: MultipleNegativesRanking (in-batch softmax over cosine x scale, both directions; each batch
from two repositories, half each, so most negatives share a project's vocabulary), one mined
hard negative per question as an extra code column, and an anchor that keeps the code vectors
near the starting model's (1 - cosine to the frozen start, weight --anchor): the doc -> code
ranking the bundled model was trained for must not be forgotten while it learns to read change
descriptions. Writes to --out: the weights as fp16 safetensors split in parts under 16 MiB
(`weights.safetensors.partN`), the config, the log, the validation MRR of the start and of the
end on held-back repositories, and (--throughput) embedding throughput of this machine's GPU and
CPU for docs/scaling.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import math
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dequantize import dequantized

HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # ragls.chunking.model.split_humps
PART = 15 * 1024 * 1024


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--val", type=Path, required=True)
    p.add_argument("--onnx", type=Path, default=Path("server/ragls/embedding/model/model.onnx"))
    p.add_argument("--base-config", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=20261127)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--epochs", type=float, default=2.0)
    p.add_argument("--minutes", type=float, default=6.0)
    p.add_argument("--scale", type=float, default=20.0)
    p.add_argument("--anchor", type=float, default=1.0)
    p.add_argument("--query-tokens", type=int, default=128)
    p.add_argument("--code-tokens", type=int, default=256)
    p.add_argument("--limit", type=int, default=0, help="pairs used (0: all); a CPU smoke test")
    p.add_argument("--throughput", action="store_true")
    return p.parse_args()


def read_jsonl(path: Path) -> list[dict]:
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        return [json.loads(line) for line in fh if line.strip()]


def question(text: str) -> str:
    return HUMP.sub(" ", text)


def load_model(args: argparse.Namespace, device: torch.device):  # type: ignore[no-untyped-def]
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    config = AutoConfig.from_pretrained(args.base_config)
    model = AutoModel.from_config(config)
    state = dequantized(args.onnx)
    own = model.state_dict()
    loaded = {}
    for k in own:
        v = state.get(f"bert.{k}", state.get(k))
        if v is not None:
            loaded[k] = torch.from_numpy(np.ascontiguousarray(v))
    missing = [k for k in own if k not in loaded and not k.endswith("position_ids") and not k.startswith("pooler.")]
    if missing:
        raise SystemExit(f"weights missing from the graph: {missing}")
    model.load_state_dict(loaded, strict=False)
    tok = AutoTokenizer.from_pretrained(args.base_config)
    return model.to(device), tok


def embed(model, enc) -> torch.Tensor:  # type: ignore[no-untyped-def]
    hidden = model(**enc).last_hidden_state.float()
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return F.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)


def encode(tok, texts: list[str], n: int, device: torch.device) -> dict[str, torch.Tensor]:  # type: ignore[no-untyped-def]
    enc = tok(texts, padding=True, truncation=True, max_length=n, return_tensors="pt")
    return {k: v.to(device) for k, v in enc.items()}


@torch.no_grad()
def embed_all(model, tok, texts: list[str], n: int, device: torch.device, batch: int = 512) -> torch.Tensor:  # type: ignore[no-untyped-def]
    out = []
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for i in range(0, len(order), batch):
        idx = order[i : i + batch]
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            out.append((idx, embed(model, encode(tok, [texts[j] for j in idx], n, device))))
    vecs = torch.zeros(len(texts), out[0][1].shape[1], device=device) if out else torch.zeros(0, 384)
    for idx, v in out:
        vecs[idx] = v
    return vecs


def validate(model, tok, val: list[dict], args: argparse.Namespace, device: torch.device) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """MRR@10 of each held-back question over every code of its repository (positives and
    mined negatives): can the model find the changed code among the project's other code?"""
    model.eval()
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for row in val:
        by_repo[row["package"]].append(row)
    rr: list[float] = []
    for rows in by_repo.values():
        codes = list(dict.fromkeys([r["code"] for r in rows] + [n for r in rows for n in r.get("negatives", [])]))
        pos = {c: i for i, c in enumerate(codes)}
        cv = embed_all(model, tok, codes, args.code_tokens, device)
        qv = embed_all(model, tok, [question(r["query"]) for r in rows], args.query_tokens, device)
        ranks = (qv @ cv.T).argsort(dim=1, descending=True)[:, :10].tolist()
        for r, top in zip(rows, ranks, strict=True):
            want = pos[r["code"]]
            rr.append(1.0 / (top.index(want) + 1) if want in top else 0.0)
    model.train()
    return {"mrr_at_10": round(float(np.mean(rr)), 4), "questions": len(rr)}


def optimise(opt: torch.optim.Optimizer, model: torch.nn.Module, loss: torch.Tensor) -> None:
    """One step: gradients of `loss`, clipped at norm 1.0, applied."""
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


def package_pieces(by_package: dict[str, list[int]], size: int, rng: random.Random) -> list[list[int]]:
    """Each package's items shuffled and cut in pieces of `size`, the pieces shuffled: batches
    made of a few pieces hold their packages' siblings as each other's negatives."""
    pieces = []
    for idx in by_package.values():
        rng.shuffle(idx)
        pieces.extend(idx[k : k + size] for k in range(0, len(idx), size))
    rng.shuffle(pieces)
    return pieces


def batches_of(pairs: list[dict], size: int, rng: random.Random) -> list[list[int]]:
    by_repo: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        by_repo[p["package"]].append(i)
    pieces = package_pieces(by_repo, size // 2, rng)
    out = []
    while len(pieces) >= 2:
        batch = pieces.pop() + pieces.pop()
        while len(batch) < size and pieces:
            batch += pieces.pop()[: size - len(batch)]
        out.append(batch[:size])
    rng.shuffle(out)
    return [b for b in out if len(b) >= size // 2]


def save_parts(model, out: Path) -> list[str]:  # type: ignore[no-untyped-def]
    from safetensors.torch import save

    state = {k: v.detach().to(torch.float16).cpu().contiguous() for k, v in model.state_dict().items()}
    blob = save(state)
    names = []
    for i in range(0, len(blob), PART):
        name = f"weights.safetensors.part{i // PART}"
        (out / name).write_bytes(blob[i : i + PART])
        names.append(name)
    (out / "weights.sha256").write_text(hashlib.sha256(blob).hexdigest() + "\n")
    return names


def throughput(model, tok, pairs: list[dict], args: argparse.Namespace, device: torch.device) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Chunks per second embedding 8,192 real code chunks at 256 tokens: this machine's GPU
    (bf16, batch 512) and its CPU with the bundled int8 ONNX graph, as ragls runs it."""
    texts = [p["code"] for p in pairs[:8192]]
    res: dict[str, object] = {"chunks": len(texts)}
    if device.type == "cuda":
        embed_all(model, tok, texts[:1024], args.code_tokens, device)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        embed_all(model, tok, texts, args.code_tokens, device)
        torch.cuda.synchronize()
        res["gpu_bf16_chunks_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)
        res["gpu"] = torch.cuda.get_device_name(0)
    try:
        import os

        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = os.cpu_count() or 1
        sess = ort.InferenceSession(str(args.onnx), opts, providers=["CPUExecutionProvider"])
        sample = texts[:1024]
        t0 = time.perf_counter()
        for i in range(0, len(sample), 16):
            enc = tok(
                sample[i : i + 16], padding=True, truncation=True, max_length=args.code_tokens, return_tensors="np"
            )
            sess.run(None, {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")})
        res["cpu_int8_onnx_chunks_per_s"] = round(len(sample) / (time.perf_counter() - t0), 1)
        res["cpu_threads"] = opts.intra_op_num_threads
        res["onnxruntime_providers"] = ort.get_available_providers()
    except Exception as exc:  # the figure is optional; the training result is not
        res["cpu_error"] = repr(exc)
    return res


def main() -> int:
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    t_start = time.monotonic()
    pairs = read_jsonl(args.pairs)
    val = read_jsonl(args.val)
    if args.limit:
        pairs, val = pairs[: args.limit], val[: max(50, args.limit // 10)]
    model, tok = load_model(args, device)
    teacher, _ = load_model(args, device)
    teacher.eval().requires_grad_(False)
    log = (args.out / "train_log.jsonl").open("w", encoding="utf-8")
    report: dict[str, object] = {"pairs": len(pairs), "val": len(val), "device": str(device)}
    report["val_start"] = validate(model, tok, val, args, device)
    print("start", report["val_start"], flush=True)
    if args.throughput:
        report["throughput"] = throughput(model, tok, pairs, args, device)
        print("throughput", report["throughput"], flush=True)
    rng = random.Random(args.seed)
    epochs = max(1, math.ceil(args.epochs))
    plan = [b for _ in range(epochs) for b in batches_of(pairs, args.batch, rng)]
    plan = plan[: max(1, int(len(plan) * args.epochs / epochs))]
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, len(plan) // 20)
    budget = args.minutes * 60
    t0 = time.monotonic()
    model.train()
    step = 0
    for step, batch in enumerate(plan):
        if time.monotonic() - t0 > budget:
            break
        items = [pairs[i] for i in batch]
        negs = [p["negatives"][0] for p in items if p.get("negatives")]
        lr = args.lr * min((step + 1) / warm, max(0.0, (len(plan) - step) / max(1, len(plan) - warm)))
        for g in opt.param_groups:
            g["lr"] = lr
        q_enc = encode(tok, [question(p["query"]) for p in items], args.query_tokens, device)
        c_enc = encode(tok, [p["code"] for p in items] + negs, args.code_tokens, device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            q = embed(model, q_enc)
            c = embed(model, c_enc)
            with torch.no_grad():
                c_ref = embed(teacher, c_enc)
        n = len(items)
        scores = q @ c.T * args.scale
        same = torch.tensor(
            [
                [i != j and (a["query"] == b["query"] or a["code"] == b["code"]) for j, b in enumerate(items)]
                for i, a in enumerate(items)
            ],
            device=device,
        )
        same_neg = torch.tensor(
            [[a["code"] == x for x in negs] for a in items], dtype=torch.bool, device=device
        ).reshape(n, len(negs))
        scores = scores.masked_fill(torch.cat([same, same_neg], dim=1), -1e4)
        labels = torch.arange(n, device=device)
        rank_loss = (F.cross_entropy(scores, labels) + F.cross_entropy(scores[:, :n].T, labels)) / 2
        anchor = (1 - (c * c_ref).sum(-1)).mean()
        loss = rank_loss + args.anchor * anchor
        optimise(opt, model, loss)
        if step % 10 == 0:
            row = {
                "step": step,
                "of": len(plan),
                "loss": round(loss.item(), 4),
                "rank": round(rank_loss.item(), 4),
                "anchor": round(anchor.item(), 5),
                "lr": lr,
                "s": round(time.monotonic() - t0, 1),
            }
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(row, flush=True)
    report["steps"] = step + 1
    report["train_seconds"] = round(time.monotonic() - t0, 1)
    report["val_end"] = validate(model, tok, val, args, device)
    print("end", report["val_end"], flush=True)
    model.config.save_pretrained(args.out)
    report["weights"] = save_parts(model, args.out)
    report["hyperparameters"] = {k: str(v) for k, v in vars(args).items()}
    report["pairs_sha256"] = hashlib.sha256(args.pairs.read_bytes()).hexdigest()
    report["torch"] = torch.__version__
    report["total_seconds"] = round(time.monotonic() - t_start, 1)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
