"""Fit the learned ranker (server/ragls/query/ranker.py) on feature dumps of the dev splits.

    .venv/bin/ragls eval --all --split dev --no-ablations --dump-features DUMPS/dev
    .venv/bin/python scripts/ranker/train.py DUMPS/dev/*.npz [--check DUMPS/held-out/*.npz] \
        [--out server/ragls/query/ranker.json]

A pairwise logistic model (RankNet with a linear scorer, fit by ragls.query.ranker_fit): for
every question, each candidate of a higher grade should outscore each of a lower one. Every
question weighs the same within its language, and every language the same (the doc -> code
metric is a mean over languages), so a project with many questions does not decide the model.

Prints MRR@10 (first candidate of grade >= 1) of the fused order and of the model, per file and
in all, for the training dumps and the `--check` ones."""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "server"))

from ragls.query.features import FEATURES  # noqa: E402
from ragls.query.ranker import LinearRanker  # noqa: E402
from ragls.query.ranker_fit import fit  # noqa: E402

MAX_NEGATIVES = 40
SIZE_COST = 1.0  # pair weight per 1,000 characters of the worse candidate (set by --size-cost)  # per relevant candidate: the highest-ranked (fused) ones, the hard ones


def load(paths: list[Path]) -> list[dict[str, object]]:
    """One entry per question: rows, grades, and its set's name and language."""
    out: list[dict[str, object]] = []
    for p in paths:
        d = np.load(p, allow_pickle=False)
        if tuple(str(f) for f in d["features"]) != FEATURES:
            raise SystemExit(f"{p}: dumped with other features; dump again")
        rows, grades, groups = d["rows"], d["grades"], d["groups"]
        for g in np.unique(groups):
            m = groups == g
            out.append({"rows": rows[m], "grades": grades[m], "set": str(d["name"]), "language": str(d["language"])})
    return out


def relabel(questions: list[dict[str, object]], positive: int) -> list[dict[str, object]]:
    """Grades below `positive` count as irrelevant: a class or a window around the answer costs
    the context budget the answer's own chunk would have used."""
    for q in questions:
        q["grades"] = np.where(q["grades"] >= positive, q["grades"], 0)  # type: ignore[operator]
    return questions


def _group(q: dict[str, object]) -> tuple[str, str]:
    """(task, language): sets named `issues-*` are the issue -> files task's (ragls_data)."""
    task = "issues" if str(q["set"]).startswith("issues-") else "doc"
    return task, str(q["language"])


def pairs(questions: list[dict[str, object]], size_cost: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(better row indices, worse row indices, pair weights) into the stacked rows."""
    # Each task weighs the same, each language the same within its task, each question the same
    # within its language: the doc -> code sets' 1,000 questions must not drown 73 bug reports.
    per_group: dict[tuple[str, str], int] = defaultdict(int)
    for q in questions:
        if (q["grades"] > 0).any():  # type: ignore[operator,union-attr]
            per_group[_group(q)] += 1
    per_task: dict[str, int] = defaultdict(int)
    for task, _ in per_group:
        per_task[task] += 1
    better, worse, weight = [], [], []
    rng = np.random.default_rng(0)
    offset = 0
    fused = FEATURES.index("fused_rr5")
    for q in questions:
        rows, grades = q["rows"], q["grades"]
        n = len(grades)  # type: ignore[arg-type]
        order = np.argsort(-rows[:, fused], kind="stable")  # type: ignore[index,call-overload]
        qp: list[tuple[int, int]] = []
        for i in np.flatnonzero(grades > 0):  # type: ignore[operator]
            below = [j for j in order if grades[j] < grades[i]]  # type: ignore[index]
            # The hardest (fused first) and a sample of the rest: the pool also holds what only the
            # dense or the lexical list brought, which the model must learn to place too.
            rest = below[MAX_NEGATIVES:]
            lower = below[:MAX_NEGATIVES] + [
                rest[int(k)] for k in rng.choice(len(rest), min(len(rest), 20), replace=False)
            ]
            qp.extend((offset + int(i), offset + int(j)) for j in lower)
        if qp:
            task = _group(q)[0]
            w = 1.0 / (len(qp) * per_group[_group(q)] * per_task[task] * len(per_task))
            size = FEATURES.index("log_chars")
            for b, c in qp:
                better.append(b)
                worse.append(c)
                # A big chunk above the answer costs the context budget more than a small one.
                chars = float(np.expm1(rows[c - offset, size] * 10))  # type: ignore[index]
                weight.append(w * (1.0 + size_cost * chars / 1000.0))
        offset += n
    return np.asarray(better), np.asarray(worse), np.asarray(weight, dtype=np.float64)


def mrr(questions: list[dict[str, object]], score) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """MRR@10 of the first candidate of grade >= 1, mean over languages of the per-language means."""
    per: dict[str, list[float]] = defaultdict(list)
    for q in questions:
        rows, grades = q["rows"], q["grades"]
        order = np.argsort(-score(rows), kind="stable")
        rr = 0.0
        for rank, i in enumerate(order[:10], start=1):
            if grades[i] > 0:  # type: ignore[index]
                rr = 1.0 / rank
                break
        per[":".join(_group(q))].append(rr)
    means = {lang: float(np.mean(v)) for lang, v in sorted(per.items())}
    means["all"] = float(np.mean(list(means.values()))) if means else 0.0
    return means


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+", type=Path)
    ap.add_argument("--check", nargs="*", type=Path, default=[])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--positive", type=int, default=2, help="the least grade that counts as relevant")
    ap.add_argument("--drop", nargs="*", default=[], help="features left out (weight 0)")
    ap.add_argument("--size-cost", type=float, default=SIZE_COST)
    a = ap.parse_args(argv)
    train = relabel(load(a.dumps), a.positive)
    x = np.concatenate([q["rows"] for q in train])  # type: ignore[misc]
    for name in a.drop:
        x[:, FEATURES.index(name)] = 0.0
    better, worse, weight = pairs(train, a.size_cost)
    print(f"{len(train)} questions, {len(x)} candidates, {len(better)} pairs", file=sys.stderr)
    w = fit(x, better, worse, weight, a.l2, a.steps)
    model = LinearRanker(w.astype(np.float32))
    fused = FEATURES.index("fused_rr5")
    for label, qs in (("train", train), ("check", relabel(load(a.check), a.positive) if a.check else [])):
        if not qs:
            continue
        base, new = mrr(qs, lambda r: r[:, fused]), mrr(qs, model.scores)
        print(f"{label}: MRR@10 fused order {base['all']:.3f} -> model {new['all']:.3f}")
        for lang in base:
            if lang != "all":
                print(f"  {lang:12s} {base[lang]:.3f} -> {new[lang]:.3f}")
    for name, value in sorted(zip(FEATURES, w, strict=True), key=lambda t: -abs(t[1])):
        print(f"  {name:28s} {value:+.4f}", file=sys.stderr)
    if a.out:
        model.save(a.out, trained_on=", ".join(sorted({str(q["set"]) for q in train})))
        print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
