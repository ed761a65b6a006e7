"""Run golden sets against a real ragls index (and BM25 baselines on the same queries)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragls.config import RetrievalSettings, Settings
from ragls.evaluation.bm25 import BM25Index, Document, function_documents, windows
from ragls.evaluation.golden import GoldenSet, load_golden
from ragls.evaluation.metrics import QueryMetrics, aggregate, evaluate_query
from ragls.evaluation.ranker_data import FeatureDump
from ragls.index.worker import Indexer
from ragls.query.query_words import query_symbols
from ragls.query.retrieval import DEFAULT_TUNING, Ask, Sources, retrieve
from ragls.text import lexical
from ragls.text.languages import language_of

TOP_K = 10  # rank metrics look at the top 10 (MRR@10, R@5, ...)


def asked_hits(settings: Settings) -> int:
    """Hits every system is asked for: the server's default `topK`, at least TOP_K. ctxR@4k
    packs them into the 4,000-character budget in rank order (what a chat model receives);
    the rank metrics read the first TOP_K."""
    return max(TOP_K, settings.retrieval.top_k)


# Each variant changes one retrieval choice from the default, for the ablation table:
# "settings" are RetrievalSettings fields, "tuning" fields of retrieval.Tuning. Choices
# made at index time (what is embedded, the lexical text, stemming, BM25 weights) need a
# re-index and are measured separately.
VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "ragls (hybrid, default)": {},
    "dense only": {"settings": {"mode": "dense"}},
    "lexical only (BM25 sparse in Qdrant)": {"settings": {"mode": "lexical"}},
    "fusion: DBSF instead of RRF": {"settings": {"fusion": "dbsf"}},
    "fusion: RRF k=10 (instead of 5)": {"tuning": {"rrf_k": 10}},
    "no name rerank": {"tuning": {"name_rerank_hits": 0}},
    "fusion: RRF k=60": {"tuning": {"rrf_k": 60}},
    "fusion: full lexical weight on prose queries too (before)": {"tuning": {"prose_lexical_factor": 1.0}},
    "fusion: prose queries lexical x0.5": {"tuning": {"prose_lexical_factor": 0.5}},
    "fusion: prose queries lexical x0.1": {"tuning": {"prose_lexical_factor": 0.1}},
    "fusion: lexical weight 0.2 on every query": {
        "settings": {"lexical_weight": 0.2},
        "tuning": {"prose_lexical_factor": 1.0},
    },
    "candidates 100 (instead of 50)": {"settings": {"candidates": 100}},
    "per-file cap 3 (instead of 5)": {"settings": {"max_per_file": 3}},
    "no exact-symbol boost": {"settings": {"symbol_boost": False}},
    "symbol boost by fusion only (not forced first)": {"tuning": {"symbol_first": False}},
    "symbol boost on every query naming a symbol": {"tuning": {"symbol_lookup_only": False}},
    "no test-file demotion": {"tuning": {"test_penalty": 1.0}},
    "no declaration demotion": {"tuning": {"declaration_penalty": 1.0}},
    "no changelog demotion": {"tuning": {"history_penalty": 1.0}},
    "no repository-file demotion": {"tuning": {"meta_penalty": 1.0}},
    "no overlap merging": {"tuning": {"merge": False}},
    "merging adjacent chunks of any size": {"tuning": {"merge_max_chars": 0}},
    "query camelCase not split": {"tuning": {"split_query_humps": False}},
    "+ lexical rerank": {"settings": {"rerank": "lexical"}},
    # What fills the 4,000-character budget: fewer hits (the server's default topK is 5),
    # a tighter per-file cap.
    "top 5 hits only (default topK before it became 10)": {"top_k": {"k": 5}},
    "per-file cap 2": {"settings": {"max_per_file": 2}},
}


# The two baselines ragls has to beat (code tokenizer: identifier splitting and stemming,
# the same one ragls' sparse vectors use, so the comparison is about ranking, not words).
BM25_WINDOWS = "BM25, 60-line windows"
BM25_FUNCTIONS = "BM25, one chunk per function"
DEFAULT = "ragls (hybrid, default)"
# Rows kept even without --ablations: the default and its two halves.
CORE = (DEFAULT, "dense only", "lexical only (BM25 sparse in Qdrant)")


@dataclass
class SetResult:
    name: str
    language: str
    queries: int
    files: int
    chunks: int
    index_seconds: float
    rows: dict[str, dict[str, float]]
    split: str | None = None


class FileLines:
    """Lines of the files under a root, read once: the ruler ctxR@4k measures hits with."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, list[str]] = {}

    def __call__(self, path: str) -> list[str]:
        if path not in self._cache:
            try:
                self._cache[path] = (self.root / path).read_text("utf-8", errors="replace").split("\n")
            except OSError:
                self._cache[path] = []
        return self._cache[path]


def idle_index(root: Path, settings: Settings) -> Indexer:
    """An indexer on `root`, started and waited on until it has nothing left to do (the
    repository tasks index a checkout per question this way)."""
    idx = Indexer(root, settings)
    idx.start()
    idx.handle.ready.wait()
    _wait(idx, root.name, quiet=True)
    return idx


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


def _score(search: Callable[[str], list[Any]], gs: GoldenSet, lines_of: FileLines | None = None) -> dict[str, float]:
    results: list[QueryMetrics] = []
    lat: list[float] = []
    for q in gs.queries:
        t0 = time.perf_counter()
        hits = search(q.query)
        lat.append((time.perf_counter() - t0) * 1000)
        results.append(evaluate_query(hits, q, lines_of))
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
    assert idx.handle.store is not None
    ids = [i for r in idx.state.records.values() for i in r.chunk_ids]
    docs = []
    for h in idx.handle.store.retrieve(ids):
        p = h.payload
        docs.append(Document(h.id, p["path"], int(p["start_line"]), int(p["end_line"]), p.get("text", "")))
    return docs


def _baseline_documents(
    root: Path, paths: Iterable[str], language: str | None
) -> tuple[list[Document], list[Document]]:
    """60-line windows and one-chunk-per-function documents of the same files. A C++
    project's `.h`/`.inl` files are parsed as C++ here whatever ragls does with them."""
    wins: list[Document] = []
    funcs: list[Document] = []
    for rel in paths:
        try:
            text = (root / rel).read_text("utf-8", errors="replace")
        except OSError:
            continue
        wins.extend(windows(rel, text, size=60))
        lang = language_of(rel)
        if language == "cpp" and (lang in (None, "c") and Path(rel).suffix in CPP_HEADER_SUFFIXES):
            lang = "cpp"
        funcs.extend(function_documents(rel, lang, text))
    return wins, funcs


CPP_HEADER_SUFFIXES = frozenset({".h", ".hpp", ".hh", ".hxx", ".inl", ".ipp", ".tpp"})


def _all_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


LEARNED = "learned ranker"


def run_golden(
    path: Path,
    settings: Settings,
    baselines: bool = True,
    ablations: bool = True,
    quiet: bool = False,
    ranker: str | None = None,
    dump: Path | None = None,
) -> SetResult:
    """`ranker`: also score the learned ranker from this model file ("" for the bundled one).
    `dump`: write every question's candidates, feature rows and grades there (ranker_data)."""
    gs = load_golden(path)
    root = gs.root_dir()
    t0 = time.monotonic()
    idx = Indexer(root, settings)
    idx.start()
    idx.handle.ready.wait()
    if idx.handle.fatal:
        idx.stop()
        raise RuntimeError(idx.handle.fatal)
    _wait(idx, gs.name, quiet)
    index_seconds = time.monotonic() - t0
    rows: dict[str, dict[str, float]] = {}
    lines_of = FileLines(root)
    asked = asked_hits(settings)
    try:
        assert idx.handle.store is not None
        index = Sources(idx.handle.store, idx.handle.embedder, names=idx.handle.cache)
        variants = VARIANTS if ablations else {k: v for k, v in VARIANTS.items() if k in CORE}
        for label, change in variants.items():
            rs = RetrievalSettings.model_validate({**settings.retrieval.model_dump(), **change.get("settings", {})})
            tu = replace(DEFAULT_TUNING, **change.get("tuning", {}))
            k = int(change.get("top_k", {}).get("k", asked))
            rows[label] = _score(
                lambda q, rs=rs, tu=tu, k=k: retrieve(index, rs, Ask(q, k, 0, tuning=tu)).hits,  # type: ignore[misc]
                gs,
                lines_of,
            )
        lookups = lookup_set(gs)
        if ranker is not None:
            tu = replace(DEFAULT_TUNING, learned=True, ranker_path=ranker)
            rs = settings.retrieval
            rows[LEARNED] = _score(lambda q: retrieve(index, rs, Ask(q, asked, 0, tuning=tu)).hits, gs, lines_of)
        if dump is not None:
            data = FeatureDump()
            for q in [*gs.queries, *lookups.queries]:  # questions, and lookups of a name: both kinds of query
                retrieve(index, settings.retrieval, Ask(q.query, asked, 0), data.tracer(q))
            data.save(dump / f"{gs.name}.npz", gs.name, gs.language or "?")
        if ablations and lookups.queries:
            for label, boost in (("lookups: ragls (default)", True), ("lookups: no exact-symbol boost", False)):
                rs = RetrievalSettings.model_validate({**settings.retrieval.model_dump(), "symbol_boost": boost})
                rows[label] = _score(lambda q, rs=rs: retrieve(index, rs, Ask(q, asked, 0)).hits, lookups)  # type: ignore[misc]
        if baselines:
            wins, funcs = _baseline_documents(root, _all_files(root), gs.language)
            docs_by_label = {BM25_WINDOWS: wins, BM25_FUNCTIONS: funcs}
            if ablations:
                docs_by_label["BM25, ragls' chunks"] = _chunk_documents(idx)
            for label, docs in docs_by_label.items():
                bm = BM25Index(docs, tokenizer=lexical.tokenize)
                rows[label] = _score(lambda q, bm=bm: bm.search(q, asked), gs, lines_of)  # type: ignore[misc]
        snap = idx.snapshot()
        return SetResult(
            gs.name, gs.language or "?", len(gs.queries), snap.files_total, snap.chunks, round(index_seconds, 1), rows
        )
    finally:
        idx.stop()
