#!/usr/bin/env python3
"""One GPU run that trains a cross-encoder reranker for change descriptions (a commit message or a
bug report against the code it changed), initialised from the bundled embedder's weights.

    python3 scripts/embedder/train_reranker_gpu.py --pairs pairs.jsonl.xz --val val.jsonl.xz \
        --base-config DIR --out OUT --layers 6,3 --minutes 3.5,2

Made for the `device` machine (one GPU; torch, transformers, onnx, onnxruntime; no network); runs
on a CPU with --limit as a smoke test. The pairs are commit_pairs.py's (commit message, changed
chunk, mined hard negatives from the same or sibling files), slimmed to the fields used here and
cut to what the model reads, so they travel in the device's 64 MiB (167 MB -> 7.4 MB):

    python3 scripts/embedder/train_reranker_gpu.py --slim ~/.cache/ragls-train/commit-pairs.jsonl pairs.jsonl.xz

Measured once (scripts/embedder/run-reranker-not-kept/, docs/history/embedding-model-log.md):
it ranks a commit's chunk among its neighbours better than the embedder, but reranking
find_files' candidates lowered issue -> files on dev, at seconds per query on 2 cores; not shipped.

Model: the bundled MiniLM's first N layers (weights recovered from the int8 graph by
dequantize.py), the pair read as `[CLS] query [SEP] code [SEP]` (query cut to --query-tokens,
code to --code-tokens, each before joining), mean-pooled, one linear score. Loss: softmax cross
entropy over each query's group (its positive, its mined negatives, --random other chunks of
the same repository). Validation on held-back repositories: MRR of the positive in its group
(positive, mined negatives, random chunks of its repository, fixed seed), the same groups
ranked by the starting embedder's cosine as the baseline. Writes to --out, per layer count: the
int8 ONNX graph (per-channel dynamic quantisation, as the embedder) split in parts under 16 MiB,
its validation MRR as exported (onnxruntime CPU), the training log; and report.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dequantize import dequantized
from train_gpu import HUMP, PART, optimise, read_jsonl

CLS, SEP = 101, 102


def slim(src: Path, dst: Path) -> int:
    """The fields this script reads, the texts cut well past the tokens it keeps, xz-compressed."""
    n = 0
    with (
        src.open(encoding="utf-8") as fh,
        lzma.open(dst, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as out,
    ):
        for line in fh:
            r = json.loads(line)
            row = {
                "query": r["query"][:1500],
                "code": r["code"][:1000],
                "negatives": [x[:1000] for x in r["negatives"]],
                "package": r["package"],
                "language": r["language"],
            }
            out.write(json.dumps(row) + "\n")
            n += 1
    return n


def parse_args() -> argparse.Namespace:
    if len(sys.argv) == 4 and sys.argv[1] == "--slim":
        print(slim(Path(sys.argv[2]).expanduser(), Path(sys.argv[3])), "pairs")
        raise SystemExit(0)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--val", type=Path, required=True)
    p.add_argument("--onnx", type=Path, default=Path("server/ragls/embedding/model/model.onnx"))
    p.add_argument("--base-config", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=20261127)
    p.add_argument("--layers", default="6", help="comma-separated layer counts, one model each")
    p.add_argument("--minutes", default="3", help="training budget per model, comma-separated")
    p.add_argument("--batch", type=int, default=64, help="queries per step")
    p.add_argument("--random", type=int, default=4, help="random same-repository negatives per query")
    p.add_argument("--lr", type=float, default=4e-5)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--query-tokens", type=int, default=128)
    p.add_argument("--code-tokens", type=int, default=192)
    p.add_argument("--val-groups", type=int, default=2000)
    p.add_argument("--limit", type=int, default=0, help="pairs used (0: all); a CPU smoke test")
    return p.parse_args()


class Texts:
    """Every distinct text tokenised once (no special tokens), cut to its side's length."""

    def __init__(self, tok, queries: list[str], codes: list[str], qn: int, cn: int) -> None:  # type: ignore[no-untyped-def]
        self.q = self._ids(tok, [HUMP.sub(" ", t) for t in queries], qn)
        self.c = self._ids(tok, codes, cn)

    @staticmethod
    def _ids(tok, texts: list[str], n: int) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
        uniq = list(dict.fromkeys(texts))
        out: dict[str, list[int]] = {}
        for i in range(0, len(uniq), 4096):
            part = uniq[i : i + 4096]
            enc = tok(part, add_special_tokens=False, truncation=True, max_length=n)["input_ids"]
            out.update(zip(part, enc, strict=True))
        return out


def joined(q_ids: list[int], c_ids: list[int]) -> tuple[list[int], list[int]]:
    ids = [CLS, *q_ids, SEP, *c_ids, SEP]
    return ids, [0] * (len(q_ids) + 2) + [1] * (len(c_ids) + 1)


def batch_tensors(rows: list[tuple[list[int], list[int]]], device: torch.device) -> dict[str, torch.Tensor]:
    n = max(len(r[0]) for r in rows)
    ids = torch.zeros(len(rows), n, dtype=torch.long)
    types = torch.zeros(len(rows), n, dtype=torch.long)
    mask = torch.zeros(len(rows), n, dtype=torch.long)
    for i, (a, t) in enumerate(rows):
        ids[i, : len(a)] = torch.tensor(a)
        types[i, : len(t)] = torch.tensor(t)
        mask[i, : len(a)] = 1
    return {"input_ids": ids.to(device), "attention_mask": mask.to(device), "token_type_ids": types.to(device)}


class Reranker(torch.nn.Module):
    def __init__(self, bert) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.bert = bert
        self.head = torch.nn.Linear(bert.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)

    def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
        hidden = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return self.head(pooled).squeeze(-1)


def load_bert(args: argparse.Namespace, layers: int, state: dict[str, np.ndarray]):  # type: ignore[no-untyped-def]
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.from_pretrained(args.base_config)
    config.num_hidden_layers = layers
    model = AutoModel.from_config(config, add_pooling_layer=False)
    own = model.state_dict()
    loaded = {}
    for k in own:
        v = state.get(f"bert.{k}", state.get(k))
        if v is not None:
            loaded[k] = torch.from_numpy(np.ascontiguousarray(v))
    missing = [k for k in own if k not in loaded and not k.endswith("position_ids")]
    if missing:
        raise SystemExit(f"weights missing from the graph: {missing}")
    model.load_state_dict(loaded, strict=False)
    return model


def val_groups(val: list[dict], n_random: int, limit: int, rng: random.Random) -> list[tuple[str, list[str]]]:
    by_repo: dict[str, list[str]] = defaultdict(list)
    for r in val:
        by_repo[r["package"]].append(r["code"])
    rows = list(val)
    rng.shuffle(rows)
    out = []
    for r in rows[:limit]:
        pool = [c for c in dict.fromkeys(by_repo[r["package"]]) if c != r["code"] and c not in r["negatives"]]
        extra = rng.sample(pool, min(n_random, len(pool)))
        out.append((r["query"], [r["code"], *r["negatives"], *extra]))
    return out


def mrr(scores: list[list[float]]) -> float:
    """Mean reciprocal rank of item 0 of each group (ties count against it)."""
    return float(np.mean([1.0 / (1 + sum(s > g[0] for s in g[1:]) + 0.0) for g in scores])) if scores else 0.0


@torch.no_grad()
def score_groups(model, texts: Texts, groups, device: torch.device, batch: int = 512) -> list[list[float]]:  # type: ignore[no-untyped-def]
    model.eval()
    flat = [(gi, joined(texts.q[HUMP.sub(" ", q)], texts.c[c])) for gi, (q, codes) in enumerate(groups) for c in codes]
    order = sorted(range(len(flat)), key=lambda i: len(flat[i][1][0]))
    out = [0.0] * len(flat)
    for i in range(0, len(order), batch):
        idx = order[i : i + batch]
        enc = batch_tensors([flat[j][1] for j in idx], device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            s = model(**enc).float().cpu().tolist()
        for j, v in zip(idx, s, strict=True):
            out[j] = v
    model.train()
    res: list[list[float]] = [[] for _ in groups]
    for (gi, _), v in zip(flat, out, strict=True):
        res[gi].append(v)
    return res


@torch.no_grad()
def cosine_baseline(bert, tok, groups, args: argparse.Namespace, device: torch.device) -> float:  # type: ignore[no-untyped-def]
    bert.eval()

    def emb(texts: list[str], n: int) -> torch.Tensor:
        vs = []
        for i in range(0, len(texts), 512):
            enc = tok(texts[i : i + 512], padding=True, truncation=True, max_length=n, return_tensors="pt").to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                h = bert(**enc).last_hidden_state.float()
            m = enc["attention_mask"].unsqueeze(-1).float()
            vs.append(F.normalize((h * m).sum(1) / m.sum(1), dim=-1))
        return torch.cat(vs)

    scores = []
    for q, codes in groups:
        qv = emb([HUMP.sub(" ", q)], args.query_tokens)
        cv = emb(codes, 256)
        scores.append((cv @ qv[0]).cpu().tolist())
    return mrr(scores)


def export_int8(model, out: Path, name: str, device: torch.device) -> Path:  # type: ignore[no-untyped-def]
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = model.float().eval().to("cpu")
    fp32 = out / f"{name}.fp32.onnx"
    dummy = batch_tensors([joined([2000, 2001], [2002, 2003, 2004])] * 2, torch.device("cpu"))
    torch.onnx.export(
        model,
        (dummy["input_ids"], dummy["attention_mask"], dummy["token_type_ids"]),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["score"],
        dynamic_axes={k: {0: "batch", 1: "seq"} for k in ("input_ids", "attention_mask", "token_type_ids")}
        | {"score": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    q8 = out / f"{name}.onnx"
    quantize_dynamic(str(fp32), str(q8), per_channel=True, weight_type=QuantType.QInt8)
    fp32.unlink()
    model.to(device)
    return q8


def onnx_val(path: Path, texts: Texts, groups) -> float:  # type: ignore[no-untyped-def]
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    res = []
    for q, codes in groups:
        rows = [joined(texts.q[HUMP.sub(" ", q)], texts.c[c]) for c in codes]
        enc = batch_tensors(rows, torch.device("cpu"))
        res.append(sess.run(None, {k: v.numpy() for k, v in enc.items()})[0].tolist())
    return mrr(res)


def split_parts(path: Path) -> list[str]:
    blob = path.read_bytes()
    names = []
    for i in range(0, len(blob), PART):
        name = f"{path.name}.part{i // PART}"
        (path.parent / name).write_bytes(blob[i : i + PART])
        names.append(name)
    path.unlink()
    return [*names, "sha256:" + hashlib.sha256(blob).hexdigest()]


def train_one(args, layers: int, minutes: float, state, tok, pairs, texts, groups, device, report) -> None:  # type: ignore[no-untyped-def]
    name = f"reranker-l{layers}"
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    model = Reranker(load_bert(args, layers, state)).to(device)
    res: dict[str, object] = {"layers": layers}
    res["val_start"] = round(mrr(score_groups(model, texts, groups, device)), 4)
    by_repo: dict[str, list[str]] = defaultdict(list)
    for p in pairs:
        by_repo[p["package"]].append(p["code"])
    order = list(range(len(pairs)))
    steps = int(len(pairs) * args.epochs) // args.batch
    plan = []
    while len(plan) < steps:
        rng.shuffle(order)
        plan += [order[i : i + args.batch] for i in range(0, len(order) - args.batch + 1, args.batch)]
    plan = plan[:steps]
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, len(plan) // 20)
    log = (args.out / "train.log.jsonl").open("a", encoding="utf-8")
    t0 = time.monotonic()
    step = -1
    for step, batch in enumerate(plan):
        if time.monotonic() - t0 > minutes * 60:
            break
        # Linear decay to zero by whichever ends first, the plan or the time budget.
        done = max(step / len(plan), (time.monotonic() - t0) / (minutes * 60))
        lr = args.lr * min((step + 1) / warm, max(0.0, 1.0 - done))
        for g in opt.param_groups:
            g["lr"] = lr
        rows, sizes = [], []
        for i in batch:
            p = pairs[i]
            avoid = {p["code"], *p["negatives"]}
            pool = by_repo[p["package"]]
            extra = [c for c in (pool[rng.randrange(len(pool))] for _ in range(args.random * 2)) if c not in avoid]
            codes = [p["code"], *p["negatives"], *list(dict.fromkeys(extra))[: args.random]]
            q = texts.q[HUMP.sub(" ", p["query"])]
            rows += [joined(q, texts.c[c]) for c in codes]
            sizes.append(len(codes))
        enc = batch_tensors(rows, device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            s = model(**enc).float()
        width = max(sizes)
        mat = torch.full((len(sizes), width), -1e4, device=device)
        k = 0
        for r, n in enumerate(sizes):
            mat[r, :n] = s[k : k + n]
            k += n
        loss = F.cross_entropy(mat, torch.zeros(len(sizes), dtype=torch.long, device=device))
        optimise(opt, model, loss)
        if step % 20 == 0:
            row = {
                "model": name,
                "step": step,
                "of": len(plan),
                "loss": round(loss.item(), 4),
                "lr": lr,
                "s": round(time.monotonic() - t0, 1),
            }
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(name, row, flush=True)
    res["steps"] = step + 1
    res["of"] = len(plan)
    res["train_seconds"] = round(time.monotonic() - t0, 1)
    res["val_end"] = round(mrr(score_groups(model, texts, groups, device)), 4)
    print(name, "val", res["val_start"], "->", res["val_end"], flush=True)
    q8 = export_int8(model, args.out, name, device)
    res["val_int8_onnx"] = round(onnx_val(q8, texts, groups[:500]), 4)
    res["val_end_first500"] = round(mrr(score_groups(model, texts, groups[:500], device)), 4)
    res["int8_bytes"] = q8.stat().st_size
    res["parts"] = split_parts(q8)
    report["models"].append(res)
    print(name, json.dumps(res), flush=True)


def main() -> int:
    from transformers import AutoTokenizer

    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    pairs, val = read_jsonl(args.pairs), read_jsonl(args.val)
    if args.limit:
        pairs, val = pairs[: args.limit], val[: max(100, args.limit // 5)]
    tok = AutoTokenizer.from_pretrained(args.base_config)
    state = dequantized(args.onnx)
    groups = val_groups(val, args.random, args.val_groups, random.Random(args.seed))
    t0 = time.monotonic()
    codes = [c for p in pairs for c in (p["code"], *p["negatives"])] + [c for _, cs in groups for c in cs]
    texts = Texts(tok, [p["query"] for p in pairs] + [q for q, _ in groups], codes, args.query_tokens, args.code_tokens)
    report: dict[str, object] = {
        "pairs": len(pairs),
        "val_groups": len(groups),
        "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
        "tokenise_seconds": round(time.monotonic() - t0, 1),
        "models": [],
    }
    full = load_bert(args, 6, state).to(device)
    report["val_embedder_cosine"] = round(cosine_baseline(full, tok, groups, args, device), 4)
    del full
    print("embedder cosine baseline", report["val_embedder_cosine"], flush=True)
    layer_list = [int(x) for x in args.layers.split(",")]
    minutes = [float(x) for x in args.minutes.split(",")]
    for layers, mins in zip(layer_list, minutes + [minutes[-1]] * len(layer_list), strict=False):
        train_one(args, layers, mins, state, tok, pairs, texts, groups, device, report)
        (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    report["hyperparameters"] = {k: str(v) for k, v in vars(args).items()}
    report["pairs_sha256"] = hashlib.sha256(args.pairs.read_bytes()).hexdigest()
    report["torch"] = torch.__version__
    report["total_seconds"] = round(time.monotonic() - t_start, 1)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
