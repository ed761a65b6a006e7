"""Ranking by the learned model (query.ranker) instead of hand-set fusion weights, boosts and
demotions: gather every candidate the lists offer (the fused search's, the dense and the lexical
search's own top lists, the files the query names), note each one's raw signals
(query.features.Signals), and order them by the model's score. Dedupe, the per-file cap and the
context budget come after, as for the rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ragls.embedding.cache import EmbeddingCache
from ragls.index.name_rerank import NAME_KEY, rerank_hits
from ragls.query.features import QueryKind, Signals, featurize
from ragls.query.ranker import LinearRanker, squash
from ragls.store import SearchRequest, Store, StoredHit

# The name list joins the fusion as the rules' does (retrieval.Tuning's values).
NAME_RERANK_HITS, NAME_RERANK_WEIGHT, RRF_K = 10, 0.25, 5

# What a training run records of each query: its kind, the candidates' signals, their rows.
Trace = Callable[[QueryKind, list[Signals], np.ndarray], None]


def _ranks(hits: list[StoredHit]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, h in enumerate(hits):
        out.setdefault(h.id, i)
    return out


def _file_ranks(files: list[str]) -> dict[str, int]:
    return {f: i for i, f in reversed(list(enumerate(files)))}


def _name_sims(pool: list[StoredHit], dense: np.ndarray | None, names: EmbeddingCache | None) -> list[float | None]:
    if dense is None or names is None or not pool:
        return [None] * len(pool)
    keys = [NAME_KEY + str(h.payload.get("text_hash") or h.id) for h in pool]
    found = names.get_many(keys, count=False)
    q = dense / (float(np.linalg.norm(dense)) or 1.0)
    out: list[float | None] = []
    for k in keys:
        v = found.get(k)
        out.append(None if v is None else float(v @ q / (float(np.linalg.norm(v)) or 1.0)))
    return out


def _name_fused(fused: list[StoredHit], dense: np.ndarray | None, names: EmbeddingCache | None) -> dict[str, float]:
    """The fused scores with the name rerank's list joined (name_rerank.rerank_hits' scores)."""
    if dense is not None and names is not None and fused:
        fused = rerank_hits(fused, dense, names, NAME_RERANK_HITS, NAME_RERANK_WEIGHT, RRF_K)
    out: dict[str, float] = {}
    for h in fused:
        out.setdefault(h.id, h.score)
    return out


def candidates(
    store: Store,
    req: SearchRequest,
    fused: list[StoredHit],
    dense: np.ndarray | None,
    names: EmbeddingCache | None,
    symbols: list[str],
    mentioned: list[str],
    history_files: list[str],
    source_files: list[str],
) -> tuple[list[StoredHit], list[Signals]]:
    """The pool (the fused hits, then what the dense and the lexical lists add) and each one's
    signals. Two more searches than the rules make, each a few milliseconds."""
    dense_hits = (
        store.search(replace(req, sparse=([], []), symbol_names=[], limit=req.candidates)) if dense is not None else []
    )
    sparse_hits = store.search(replace(req, dense=None, symbol_names=[], limit=req.candidates)) if req.sparse[0] else []
    pool: list[StoredHit] = []
    seen: set[str] = set()
    for h in (*fused, *dense_hits, *sparse_hits):
        if h.id not in seen:
            seen.add(h.id)
            pool.append(h)
    fused_rank, dense_rank, sparse_rank = _ranks(fused), _ranks(dense_hits), _ranks(sparse_hits)
    fused_score = _name_fused(fused, dense, names)
    mention, hist, src = _file_ranks(mentioned), _file_ranks(history_files), _file_ranks(source_files)
    wanted = set(symbols)
    sims = _name_sims(pool, dense, names)
    signals: list[Signals] = []
    for h, sim in zip(pool, sims, strict=True):
        p = h.payload
        path = str(p.get("path", ""))
        signals.append(
            Signals(
                path=path,
                start_line=int(p.get("start_line", 1)),
                end_line=int(p.get("end_line", 1)),
                kind=str(p.get("kind", "text")),
                language=str(p.get("language", "text")),
                symbol=p.get("symbol"),
                content=str(p.get("text", "")),
                fused_rank=fused_rank.get(h.id, len(fused)),
                fused_score=fused_score.get(h.id, 0.0),
                dense_rank=dense_rank.get(h.id),
                sparse_rank=sparse_rank.get(h.id),
                name_sim=sim,
                symbol_named=bool(wanted and wanted.intersection(p.get("symbol_names") or ())),
                mention_rank=mention.get(path),
                history_rank=hist.get(path),
                source_rank=src.get(path),
            )
        )
    return pool, signals


def rank(
    kind: QueryKind, pool: list[StoredHit], signals: list[Signals], model: LinearRanker | None, trace: Trace | None
) -> list[StoredHit]:
    """The pool in the model's order (stable on ties), each hit scored by it; without a model
    (a training run's first dump), in the fused order."""
    rows = featurize(kind, signals)
    if trace is not None:
        trace(kind, signals, rows)
    if model is None:
        return pool
    scores = model.scores(rows)
    order = sorted(range(len(pool)), key=lambda i: (-float(scores[i]), i))
    return [replace(pool[i], score=squash(float(scores[i]))) for i in order]
