"""Run golden sets against a real ragls index (and BM25 baselines on the same queries)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragls import lexical
from ragls.config import RetrievalSettings, Settings
from ragls.evaluation.bm25 import BM25Index, Document, simple_tokenize, windows
from ragls.evaluation.golden import GoldenSet, load_golden
from ragls.evaluation.metrics import QueryMetrics, aggregate, evaluate_query
from ragls.indexer import Indexer
from ragls.retrieval import DEFAULT_TUNING, query_symbols, retrieve

TOP_K = 10

# Each variant changes one retrieval choice from the default, for the ablation table:
# "settings" are RetrievalSettings fields, "tuning" fields of retrieval.Tuning. Choices
# made at index time (what is embedded, the lexical text, stemming, BM25 weights) need a
# re-index and are measured separately (docs/evaluation.md).
VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "ragls (hybrid, default)": {},
    "dense only": {"settings": {"mode": "dense"}},
    "lexical only (BM25 sparse in Qdrant)": {"settings": {"mode": "lexical"}},
    "fusion: DBSF instead of RRF": {"settings": {"fusion": "dbsf"}},
    "fusion: RRF k=5 (instead of 10)": {"tuning": {"rrf_k": 5}},
    "fusion: RRF k=60": {"tuning": {"rrf_k": 60}},
    "fusion: weights dense 1.0 / lexical 0.7": {"settings": {"lexical_weight": 0.7}},
    "fusion: weights dense 0.7 / lexical 1.0": {"settings": {"dense_weight": 0.7}},
    "candidates 100 (instead of 50)": {"settings": {"candidates": 100}},
    "per-file cap 3 (instead of 5)": {"settings": {"max_per_file": 3}},
    "no exact-symbol boost": {"settings": {"symbol_boost": False}},
    "symbol boost by fusion only (not forced first)": {"tuning": {"symbol_first": False}},
    "symbol boost on every query naming a symbol": {"tuning": {"symbol_lookup_only": False}},
    "no test-file demotion": {"tuning": {"test_penalty": 1.0}},
    "no overlap merging": {"tuning": {"merge": False}},
    "query camelCase not split": {"tuning": {"split_query_humps": False}},
    "+ lexical rerank": {"settings": {"rerank": "lexical"}},
}


@dataclass
class SetResult:
    name: str
    language: str
    queries: int
    files: int
    chunks: int
    index_seconds: float
    rows: dict[str, dict[str, float]]


def _wait(idx: Indexer, label: str, quiet: bool) -> None:
    t0 = time.monotonic()
    last = 0.0
    while idx.busy():
        time.sleep(0.5)
        if not quiet and time.monotonic() - last > 10:
            s = idx.snapshot()
            print(
                f"  [{label}] {s.phase} dense {s.dense.done}/{s.files_total} files, {s.chunks} chunks, "
                f"{time.monotonic() - t0:.0f}s",
                file=sys.stderr,
                flush=True,
            )
            last = time.monotonic()


def _score(search: Callable[[str], list[Any]], gs: GoldenSet) -> dict[str, float]:
    results: list[QueryMetrics] = []
    lat: list[float] = []
    for q in gs.queries:
        t0 = time.perf_counter()
        hits = search(q.query)
        lat.append((time.perf_counter() - t0) * 1000)
        results.append(evaluate_query(hits[:TOP_K], q))
    return aggregate(results, lat)


def lookup_set(gs: GoldenSet) -> GoldenSet:
    """Identifier lookups derived from a golden set: "what does NAME do" for each answer whose
    name is code-shaped or qualified (`cmp_using`, `Logger.SetLevel`): the queries the
    exact-symbol boost exists for, which doc-summary queries never are."""
    queries = []
    for q in gs.queries:
        name = (q.symbols or [""])[0]
        if name and (query_symbols(name) or "." in name):
            queries.append(q.model_copy(update={"id": f"{q.id}:lookup", "query": f"what does {name} do"}))
    return gs.model_copy(update={"queries": queries})


def _chunk_documents(idx: Indexer) -> list[Document]:
    assert idx.store is not None
    ids = [i for r in idx.records.values() for i in r.chunk_ids]
    docs = []
    for h in idx.store.retrieve(ids):
        p = h.payload
        docs.append(Document(h.id, p["path"], int(p["start_line"]), int(p["end_line"]), p.get("text", "")))
    return docs


def _window_documents(root: Path, paths: Iterable[str]) -> list[Document]:
    docs: list[Document] = []
    for rel in paths:
        try:
            text = (root / rel).read_text("utf-8", errors="replace")
        except OSError:
            continue
        docs.extend(windows(rel, text, size=60))
    return docs


def run_golden(
    path: Path, settings: Settings, baselines: bool = True, ablations: bool = True, quiet: bool = False
) -> SetResult:
    gs = load_golden(path)
    root = gs.root_dir()
    t0 = time.monotonic()
    idx = Indexer(root, settings)
    idx.start()
    idx.ready.wait()
    if idx.fatal:
        idx.stop()
        raise RuntimeError(idx.fatal)
    _wait(idx, gs.name, quiet)
    index_seconds = time.monotonic() - t0
    rows: dict[str, dict[str, float]] = {}
    try:
        assert idx.store is not None
        store, emb = idx.store, idx.embedder
        variants = VARIANTS if ablations else {k: v for k, v in VARIANTS.items() if not v}
        for label, change in variants.items():
            rs = RetrievalSettings.model_validate({**settings.retrieval.model_dump(), **change.get("settings", {})})
            tu = replace(DEFAULT_TUNING, **change.get("tuning", {}))
            rows[label] = _score(
                lambda q, rs=rs, tu=tu: retrieve(store, emb, rs, q, TOP_K, 0, None, None, tuning=tu).hits,  # type: ignore[misc]
                gs,
            )
        lookups = lookup_set(gs)
        if ablations and lookups.queries:
            for label, boost in (("lookups: ragls (default)", True), ("lookups: no exact-symbol boost", False)):
                rs = RetrievalSettings.model_validate({**settings.retrieval.model_dump(), "symbol_boost": boost})
                rows[label] = _score(lambda q, rs=rs: retrieve(store, emb, rs, q, TOP_K, 0, None, None).hits, lookups)  # type: ignore[misc]
        if baselines:
            chunks = _chunk_documents(idx)
            wins = _window_documents(root, idx.indexed_paths())
            for label, docs, tok in (
                ("BM25, same chunks", chunks, simple_tokenize),
                ("BM25, 60-line windows", wins, simple_tokenize),
                ("BM25 + code tokenizer, same chunks", chunks, lexical.tokenize),
                ("BM25 + code tokenizer, 60-line windows", wins, lexical.tokenize),
            ):
                bm = BM25Index(docs, tokenizer=tok)
                rows[label] = _score(lambda q, bm=bm: bm.search(q, TOP_K), gs)  # type: ignore[misc]
        snap = idx.snapshot()
        return SetResult(
            gs.name, gs.language or "?", len(gs.queries), snap.files_total, snap.chunks, round(index_seconds, 1), rows
        )
    finally:
        idx.stop()
