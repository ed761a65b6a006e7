#!/usr/bin/env python3
"""Train a query encoder into the frozen vector space of the bundled document encoder.

    python3 scripts/embedder/train_query_gpu.py --pairs pairs.jsonl.xz --base-config DIR \
        --out OUT --variants "lr=5e-5,epochs=3;lr=1e-4,epochs=3,names=0.5"

The documents keep the bundled model (an index built today stays valid); only the question
side learns. Because the code vectors are frozen they are computed once, so every question can
be scored against *every* documented function of its own package (up to 1,200 siblings: the
methods that differ only in a name and the type they belong to) plus a random sample of other
packages, instead of the 32 in-batch negatives the bundled model was trained with. Optionally
(`names=W`) the same softmax over the chunks' name vectors (the first tokens of the chunk,
pooled as ragls.index.name_rerank pools them), so one query vector serves the dense search and the
name rerank. `anchor=W` keeps the question vector near the bundled model's own.

Made for the `device` machine (one GPU, torch, transformers, onnx, onnxruntime; no network), and
runs on a CPU too (a smoke test with --limit). Each variant starts again from the bundled
weights (recovered from the int8 graph by dequantize.py); every variant's validation MRR@10
(a held-back package's question among all of that package's code) is reported, and the best
`--export` variants are exported as int8 ONNX exactly as the bundled model is (per-channel
dynamic quantisation, refused under a 0.98 cosine to the float weights), split in parts of
15 MiB (`query-<variant>.onnx.partN`).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import lzma
import math
import random
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from pairkey import question_text  # noqa: E402
from train_gpu import embed, encode, load_model, optimise, package_pieces  # noqa: E402
from train_reranker_gpu import split_parts  # noqa: E402

PART = 15 * 1024 * 1024
DEFAULTS = {"lr": 5e-5, "epochs": 3.0, "names": 0.0, "anchor": 0.0, "scale": 20.0, "others": 2048.0}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--onnx", type=Path, default=Path("server/ragls/embedding/model/model.onnx"))
    p.add_argument("--base-config", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--variants", default="lr=5e-5,epochs=3", help="';'-separated, each 'key=value,...'")
    p.add_argument("--export", type=int, default=2, help="export the best N variants")
    p.add_argument("--seed", type=int, default=20261128)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--packages-per-batch", type=int, default=4)
    p.add_argument("--val-share", type=float, default=0.05, help="packages held back for validation")
    p.add_argument("--query-tokens", type=int, default=64)
    p.add_argument("--slice", type=int, default=32, help="questions per forward pass (of similar length)")
    p.add_argument("--code-tokens", type=int, default=256)
    p.add_argument("--minutes", type=float, default=8.0, help="training budget of all variants together")
    p.add_argument("--limit", type=int, default=0, help="pairs used (0: all); a CPU smoke test")
    p.add_argument(
        "--vectors",
        type=Path,
        help="code_vectors.py's output: train on its pairs with its (ONNX) code vectors instead of embedding them here",
    )
    return p.parse_args()


def variant(text: str) -> dict[str, float]:
    out = dict(DEFAULTS)
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, _, value = item.partition("=")
        if key not in DEFAULTS:
            raise SystemExit(f"unknown variant key {key!r} (known: {', '.join(DEFAULTS)})")
        out[key] = float(value)
    return out


def label(v: dict[str, float]) -> str:
    return "-".join(f"{k}{v[k]:g}" for k in ("lr", "epochs", "names", "anchor") if v[k] != 0 or k in ("lr", "epochs"))


def read_pairs(path: Path, limit: int, chosen: np.ndarray | None = None) -> list[dict]:
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        rows = [json.loads(line) for line in fh if line.strip()]
    if chosen is not None:
        rows = [rows[i] for i in chosen.tolist()]
    if limit:
        rng = random.Random(0)
        rng.shuffle(rows)
        rows = rows[:limit]
    return rows


def held_back(package: str, share: float) -> bool:
    """The validation packages: a stable choice by name, never by position in the file."""
    return (zlib.crc32(package.encode()) % 10_000) < share * 10_000


def name_heads(tok, codes: list[str]) -> list[int]:  # type: ignore[no-untyped-def]
    """Tokens of each code text's name line (its first two lines: the qualified symbol and the
    definition's first line, as chunking.model.name_text builds it) after [CLS]."""
    heads = tok(["\n".join(c.split("\n")[:2]) for c in codes], truncation=True, max_length=64)["input_ids"]
    return [max(1, len(ids) - 1) for ids in heads]


@torch.no_grad()
def embed_codes(model, tok, codes: list[str], heads: list[int], n: int, device: torch.device, batch: int = 512):  # type: ignore[no-untyped-def]
    """Each code's chunk vector and name vector (mean of the hidden states of [CLS] + its name
    line's tokens, as LocalOnnxEmbedder.embed_with_names pools them), from one forward pass."""
    dim = model.config.hidden_size
    vecs = torch.zeros(len(codes), dim, device=device)
    names = torch.zeros(len(codes), dim, device=device)
    order = sorted(range(len(codes)), key=lambda i: len(codes[i]))
    for i in range(0, len(order), batch):
        idx = order[i : i + batch]
        enc = encode(tok, [codes[j] for j in idx], n, device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            hidden = model(**enc).last_hidden_state.float()
        mask = enc["attention_mask"].unsqueeze(-1).float()
        vecs[idx] = F.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)
        head = torch.zeros_like(mask)
        for r, j in enumerate(idx):
            head[r, : min(heads[j] + 1, int(mask[r].sum().item()))] = 1
        names[idx] = F.normalize((hidden * head).sum(1) / head.sum(1).clamp(min=1e-9), dim=-1)
    return vecs, names


@torch.no_grad()
def embed_queries(model, tok, texts: list[str], n: int, device: torch.device, batch: int = 1024) -> torch.Tensor:  # type: ignore[no-untyped-def]
    out = torch.zeros(len(texts), model.config.hidden_size, device=device)
    for i in range(0, len(texts), batch):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            out[i : i + batch] = embed(model, encode(tok, texts[i : i + batch], n, device)).float()
    return out


class Data:
    """The pairs as indices: unique codes (vectors computed once), questions, packages, and for
    each question the codes that answer the same sentence (masked, never negatives)."""

    def __init__(self, pairs: list[dict], share: float) -> None:
        self.codes = sorted({p["code"] for p in pairs})
        code_id = {c: i for i, c in enumerate(self.codes)}
        self.questions = [question_text(p["query"]) for p in pairs]
        self.positive = [code_id[p["code"]] for p in pairs]
        self.package = [p["package"] for p in pairs]
        self.language = [p.get("language", "") for p in pairs]
        same: dict[str, set[int]] = defaultdict(set)
        for p, c in zip(pairs, self.positive, strict=True):
            same[p["query"].lower()].add(c)
        self.also = [sorted(same[p["query"].lower()] - {c}) for p, c in zip(pairs, self.positive, strict=True)]
        self.package_codes: dict[str, list[int]] = defaultdict(list)
        for pkg, c in zip(self.package, self.positive, strict=True):
            self.package_codes[pkg].append(c)
        self.package_codes = {k: sorted(set(v)) for k, v in self.package_codes.items()}
        self.val = [i for i, pkg in enumerate(self.package) if held_back(pkg, share)]
        held = set(self.val)
        self.train = [i for i in range(len(pairs)) if i not in held]


def batches(data: Data, size: int, per_batch: int, rng: random.Random) -> list[list[int]]:
    """Batches of `size` questions from `per_batch` packages each (so a batch's candidates are
    those packages' codes), every question once per epoch."""
    by_pkg: dict[str, list[int]] = defaultdict(list)
    for i in data.train:
        by_pkg[data.package[i]].append(i)
    pieces = package_pieces(by_pkg, max(1, size // per_batch), rng)
    return [[i for piece in pieces[k : k + per_batch] for i in piece] for k in range(0, len(pieces), per_batch)]


def validate(q: torch.Tensor, vecs: torch.Tensor, data: Data) -> dict[str, object]:
    """MRR@10 and R@1 of each held-back question among all of its package's codes (the siblings
    the questions must tell apart), overall and per language."""
    by_pkg: dict[str, list[int]] = defaultdict(list)
    for i in data.val:
        by_pkg[data.package[i]].append(i)
    rr: dict[str, list[float]] = defaultdict(list)
    r1: list[float] = []
    for pkg, rows in by_pkg.items():
        cand = data.package_codes[pkg]
        col = {c: j for j, c in enumerate(cand)}
        scores = q[rows] @ vecs[cand].T
        for r, i in enumerate(rows):
            s = scores[r].clone()
            for c in data.also[i]:
                if c in col:
                    s[col[c]] = -1e4
            rank = int((s > s[col[data.positive[i]]]).sum().item()) + 1
            value = 1.0 / rank if rank <= 10 else 0.0
            rr[data.language[i]].append(value)
            rr[""].append(value)
            r1.append(1.0 if rank == 1 else 0.0)
    return {
        "mrr_at_10": round(float(np.mean(rr[""])), 4) if rr[""] else 0.0,
        "r_at_1": round(float(np.mean(r1)), 4) if r1 else 0.0,
        "questions": len(rr[""]),
        "languages": {k: round(float(np.mean(v)), 4) for k, v in sorted(rr.items()) if k},
    }


def embed_sorted(model, tok, texts: list[str], args: argparse.Namespace, device: torch.device) -> torch.Tensor:  # type: ignore[no-untyped-def]
    """The questions' vectors (with gradients) in their own order, computed in slices of
    similar length: padding every question to the batch's longest doubles the work, which
    on a CPU is the whole cost of a step."""
    order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
    parts = []
    for k in range(0, len(order), args.slice):
        enc = encode(tok, [texts[j] for j in order[k : k + args.slice]], args.query_tokens, device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            parts.append(embed(model, enc).float())
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    return torch.cat(parts)[inverse.to(device)]


def train_variant(  # type: ignore[no-untyped-def]
    start,
    tok,
    data: Data,
    vecs: torch.Tensor,
    names: torch.Tensor,
    q0: torch.Tensor,
    v: dict[str, float],
    args: argparse.Namespace,
    device: torch.device,
    seconds: float,
    log,
):
    model = copy.deepcopy(start).train().requires_grad_(True)
    rng = random.Random(args.seed)
    epochs = max(1, math.ceil(v["epochs"]))
    plan = [b for _ in range(epochs) for b in batches(data, args.batch, args.packages_per_batch, rng)]
    plan = plan[: max(1, int(len(plan) * v["epochs"] / epochs))]
    opt = torch.optim.AdamW(model.parameters(), lr=v["lr"], weight_decay=0.01)
    warm = max(1, len(plan) // 20)
    t0 = time.monotonic()
    n_codes = len(data.codes)
    step = 0
    for step, batch in enumerate(plan):
        if time.monotonic() - t0 > seconds:
            break
        lr = v["lr"] * min((step + 1) / warm, max(0.0, (len(plan) - step) / max(1, len(plan) - warm)))
        for g in opt.param_groups:
            g["lr"] = lr
        own = sorted({c for i in batch for c in data.package_codes[data.package[i]]})
        others = rng.sample(range(n_codes), min(int(v["others"]), n_codes))
        owned = set(own)
        cand = own + [c for c in others if c not in owned]
        col = {c: j for j, c in enumerate(cand)}
        labels = torch.tensor([col[data.positive[i]] for i in batch], device=device)
        mask = torch.zeros(len(batch), len(cand), dtype=torch.bool)
        for r, i in enumerate(batch):
            for c in data.also[i]:
                if c in col:
                    mask[r, col[c]] = True
        mask = mask.to(device)
        cand_t = torch.tensor(cand, device=device)
        q = embed_sorted(model, tok, [data.questions[i] for i in batch], args, device)
        loss = F.cross_entropy((q @ vecs[cand_t].T * v["scale"]).masked_fill(mask, -1e4), labels)
        if v["names"]:
            loss = loss + v["names"] * F.cross_entropy(
                (q @ names[cand_t].T * v["scale"]).masked_fill(mask, -1e4), labels
            )
        if v["anchor"]:
            idx = torch.tensor(batch, device=device)
            loss = loss + v["anchor"] * (1 - (q * q0[idx]).sum(-1)).mean()
        optimise(opt, model, loss)
        if step % 20 == 0:
            row = {
                "variant": label(v),
                "step": step,
                "of": len(plan),
                "loss": round(loss.item(), 4),
                "lr": lr,
                "candidates": len(cand),
                "s": round(time.monotonic() - t0, 1),
            }
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(row, flush=True)
    model.eval()
    return model, {"steps": step + 1, "of": len(plan), "seconds": round(time.monotonic() - t0, 1)}


def export(model, tok, path: Path) -> float:  # type: ignore[no-untyped-def]
    """int8 ONNX exactly as scripts/export_model.py makes the bundled graph; returns the minimum
    mean-pooled cosine of the graph to the float weights on its sample texts."""
    from export_model import export_int8, graph_cosines

    model = copy.deepcopy(model).float().cpu().eval()
    return float(graph_cosines(model, path, export_int8(model, tok, path)).min())


def onnx_queries(path: Path, tok, texts: list[str], n: int, batch: int = 256) -> torch.Tensor:  # type: ignore[no-untyped-def]
    """The questions embedded by the int8 graph itself, pooled as ragls pools them: what the
    server will compute, quantised activations included."""
    import os

    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = os.cpu_count() or 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    out = []
    for i in range(0, len(texts), batch):
        enc = tok(texts[i : i + batch], padding=True, truncation=True, max_length=n, return_tensors="np")
        hidden = sess.run(
            None, {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
        )[0]
        mask = enc["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
        out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
    return torch.from_numpy(np.concatenate(out)).float()


def main() -> int:
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    t_start = time.monotonic()
    given = np.load(args.vectors) if args.vectors else None
    data = Data(read_pairs(args.pairs, args.limit, given["pairs"] if given is not None else None), args.val_share)
    start, tok = load_model(args, device)
    start.eval().requires_grad_(False)
    report: dict[str, object] = {
        "pairs": len(data.questions),
        "codes": len(data.codes),
        "train": len(data.train),
        "val": len(data.val),
        "val_packages": len({data.package[i] for i in data.val}),
        "device": str(device),
        "gpu": torch.cuda.get_device_name(0) if device.type == "cuda" else "",
        "pairs_sha256": hashlib.sha256(args.pairs.read_bytes()).hexdigest(),
        "hyperparameters": {k: str(val) for k, val in vars(args).items()},
        "torch": torch.__version__,
    }
    if args.vectors:
        report["vectors"] = {"file": args.vectors.name, "sha256": hashlib.sha256(args.vectors.read_bytes()).hexdigest()}
    t = time.monotonic()
    if given is not None:
        row = {sha: i for i, sha in enumerate(given["code_sha1"].tolist())}
        take = [row[hashlib.sha1(c.encode()).hexdigest()] for c in data.codes]
        vecs = torch.from_numpy(given["vectors"][take]).to(device)
        names = torch.from_numpy(given["names"][take]).to(device)
    else:
        vecs, names = embed_codes(start, tok, data.codes, name_heads(tok, data.codes), args.code_tokens, device)
    variants = [variant(x) for x in args.variants.split(";") if x.strip()]
    # The starting model's question vectors: every question's for the anchor, else the
    # validation questions' only (on a CPU the rest would cost minutes for nothing).
    q0 = torch.zeros(len(data.questions), vecs.shape[1], device=device)
    need = range(len(data.questions)) if any(v["anchor"] for v in variants) else data.val
    q0[list(need)] = embed_queries(start, tok, [data.questions[i] for i in need], args.query_tokens, device)
    report["embed_seconds"] = round(time.monotonic() - t, 1)
    report["val_start"] = validate(q0, vecs, data)
    report["val_start_names"] = validate(q0, names, data)
    q = torch.zeros(len(data.questions), vecs.shape[1])
    q[data.val] = onnx_queries(args.onnx, tok, [data.questions[i] for i in data.val], args.query_tokens)
    report["val_start_int8"] = validate(q.to(device), vecs, data)
    report["val_start_int8_names"] = validate(q.to(device), names, data)
    print("start", report["val_start"], report["val_start_int8"]["mrr_at_10"], flush=True)
    seconds = args.minutes * 60 / max(1, len(variants))
    results = []
    with (args.out / "train_log.jsonl").open("w", encoding="utf-8") as log:
        for v in variants:
            model, run = train_variant(start, tok, data, vecs, names, q0, v, args, device, seconds, log)
            q = torch.zeros_like(q0)
            q[data.val] = embed_queries(model, tok, [data.questions[i] for i in data.val], args.query_tokens, device)
            run |= {
                "variant": label(v),
                "settings": v,
                "val": validate(q, vecs, data),
                "val_names": validate(q, names, data),
            }
            print("end", json.dumps(run), flush=True)
            results.append((run, model.cpu()))
            del q
    results.sort(key=lambda r: -r[0]["val"]["mrr_at_10"])
    report["variants"] = [r for r, _ in results]
    # The best variant, then the best of the other kind (with or without the name objective,
    # which decides whether one question vector can also serve the name rerank), then the rest.
    other = [r for r in results[1:] if bool(r[0]["settings"]["names"]) != bool(results[0][0]["settings"]["names"])]
    chosen = results[:1] + other[:1]
    chosen += [r for r in results if all(r is not c for c in chosen)]
    for run, model in chosen[: args.export]:
        path = args.out / f"query-{run['variant']}.onnx"
        run["cosine_min_vs_fp32"] = round(export(model, tok, path), 4)
        run["onnx_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        run["onnx_bytes"] = path.stat().st_size
        q = torch.zeros(len(data.questions), vecs.shape[1])
        q[data.val] = onnx_queries(path, tok, [data.questions[i] for i in data.val], args.query_tokens)
        run["val_int8"] = validate(q.to(vecs.device), vecs, data)
        run["val_int8_names"] = validate(q.to(vecs.device), names, data)
        run["parts"] = split_parts(path)
        print("exported", run["variant"], run["cosine_min_vs_fp32"], run["val_int8"]["mrr_at_10"], flush=True)
    report["total_seconds"] = round(time.monotonic() - t_start, 1)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "hyperparameters"}, indent=1), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
