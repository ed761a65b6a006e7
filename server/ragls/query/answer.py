"""A `rag/retrieve` answer from an open index (sharing/local_index.py, for every front end): "no
retrieval" sets `error` (empty context, `protocol.unanswered`), "degraded" keeps the results and
adds `warnings` (docs/protocol.md). `fuse`: several folders' answers as one ranking (WorkspaceIndex, for
retrieval and symbol lookup)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.config import RetrievalSettings
from ragls.embedding import EmbeddingError
from ragls.protocol import ChunkOut, Position, Range, RetrieveResultOut, unanswered
from ragls.query.context import ContextChunk, format_context
from ragls.query.graph_context import moved_blocks, neighbour_blocks
from ragls.query.query_words import lookup_symbols, query_symbols
from ragls.query.retrieval import (
    Ask,
    Hit,
    RetrieveResult,
    Sources,
    load_ranker,
    retrieve,
    symbol_first,
    tuning_for,
    uses_source,
)
from ragls.text import lexical

if TYPE_CHECKING:
    from ragls.index.handle import IndexHandle
    from ragls.query.learned import Trace

log = logging.getLogger(__name__)

# A request that asks for the git history waits this long for its first read (0.5-1.8 s for 1,000
# commits); later reads happen while the previous history answers.
FIRST_HISTORY_WAIT = 10.0
ROOM_FOR_SIGNATURES = 120  # characters left in the budget under which no signature is looked for
UNAVAILABLE = "index is not available"  # its store did not open, and no reason was recorded


def answer(
    idx: IndexHandle,
    settings: RetrievalSettings,
    root: Path,
    query: str,
    top_k: int,
    max_chars: int,
    allowed: list[str] | None = None,
    languages: list[str] | None = None,
    intent: str = "question",
    ranker: str | None = None,
    trace: Trace | None = None,
) -> RetrieveResultOut:
    """Blocking (run it off the event loop). Never raises for a store or provider failure.
    `idx`: the index's handle (`Indexer.handle`), never the worker itself.
    `intent` "change": the query describes a change; rank its files (RetrieveParams.intent).
    `ranker`: a model file to rank by instead of the rules (a folder's tuned model,
    feedback.tuning); one that cannot be read or was made for other features is skipped with a
    warning, and the rules rank. `trace`: retrieval.retrieve's (the feature rows of the candidates)."""
    if idx.store is None or idx.fatal:
        return unanswered(RetrieveResultOut, idx.fatal or UNAVAILABLE)
    idx.seek(query_symbols(query))  # mid-pass, files naming what was asked go first (a no-op after)
    warnings: list[str] = []
    if idx.embedder is None and settings.mode != "lexical":
        warnings.append(
            f"the embedding model could not be loaded ({idx.model_error}); results are lexical only"
            if idx.model_error
            else "the embedding model is still loading; results are lexical only"
        )
    if idx.breaker.is_open:
        # The provider is known to be down: do not make the user wait for its timeouts.
        settings = settings.model_copy(update={"mode": "lexical"})
        warnings.append(f"dense search paused, the embedding provider is down ({idx.breaker.last_error}); lexical only")
    idx.git_history.configure(settings.git_history_commits)
    history = idx.git_history if intent == "change" else None
    if ranker:
        try:
            load_ranker(ranker)
        except (OSError, ValueError) as exc:
            warnings.append(f"the tuned ranker is not used, ranked by the default rules: {exc}")
            ranker = None
    tuning = tuning_for(intent, ranker)
    source = idx.source_lexicon if uses_source(tuning, query) else None
    # The first change request waits for both at once, 10 s at most in all (a large index's
    # lexicon can take longer: that request answers without it, the next ones with it).
    deadline = time.monotonic() + FIRST_HISTORY_WAIT
    if source is not None:
        source.wait_first(0)  # starts its build
    if history is not None:
        history.wait_first(FIRST_HISTORY_WAIT)
    if source is not None:
        source.wait_first(max(0.0, deadline - time.monotonic()))
    ask = Ask(query, top_k, max_chars, allowed, languages, tuning)
    store = idx.view()  # the chunks of the last published records only (index/view.py)
    try:
        try:
            sources = Sources(
                store, idx.embedder, names=idx.cache, history=history, files=idx.files, source=source, graph=idx.graph
            )
            res = retrieve(sources, settings, ask, trace)
        except EmbeddingError as exc:
            # The embedding provider is down: lexical search still answers, and says so.
            log.warning("query embedding failed, answering from lexical search only: %s", exc)
            lexical = settings.model_copy(update={"mode": "lexical"})
            res = retrieve(Sources(store, idx.embedder), lexical, ask)
            warnings.append(f"dense search unavailable ({exc}); results are lexical only")
    except Exception as exc:  # the store can fail (remote down); chat must keep working
        log.error("retrieve failed: %s", exc)
        return unanswered(RetrieveResultOut, f"retrieval failed: {exc}")
    # The graph's signatures go in the room the chunks leave (a block is ~100-200 characters):
    # none left, no graph read.
    if res.hits and res.context and max_chars - len(res.context) >= ROOM_FOR_SIGNATURES:
        t0 = time.perf_counter()
        extra = neighbour_blocks(idx.graph, res.hits)
        if extra:
            chunks = [ContextChunk(h.path, h.start_line, h.end_line, h.symbol, h.content) for h in res.hits]
            res.context = format_context(chunks, max_chars, extra)
        res.took_ms += (time.perf_counter() - t0) * 1000
    return retrieve_result(res, root, warnings)


def fuse(
    parts: list[tuple[str, str, RetrieveResultOut]],
    query: str,
    top_k: int,
    max_chars: int,
    symbol_boost: bool = True,
) -> RetrieveResultOut:
    """One ranking from the answers of several folders' indexes ((folder name, folder URI,
    answer) each, in workspace order), for a workspace of 2+ folders.

    Why these scores: a folder's scores come from weighted reciprocal-rank fusion of its dense,
    lexical and symbol rankings (retrieval.py), so they depend on ranks only, with the same `k`
    and weights in every folder: merging by them is RRF over every folder's ranked lists. Raw
    similarities are not comparable across indexes (BM25 IDF is per collection, folders may
    use different embedders). A folder's own order (symbol-first, lexical rerank) is kept: each
    chunk's key is the best score at or below its rank in its folder. Keys tie often (the top
    of every folder); ties go to the chunk holding more of the query's terms, a signal that
    means the same in every folder (+0.03 MRR@10 on the dev sets, eval/multiroot_fusion.py),
    then to the better rank in its folder, then to workspace order. Definitions the query names
    move to the top over all folders, as within one. Paths in `context` are `folder/path`."""
    t0 = time.perf_counter()
    ok = [(name, uri, res) for name, uri, res in parts if res.error is None]
    if not ok:
        why = "; ".join(f"{name}: {res.error}" for name, _, res in parts)
        return unanswered(RetrieveResultOut, why or "no folder to search")
    warnings = [f"{name}: {w}" for name, _, res in parts for w in res.warnings]
    warnings += [f"{name}: not searched ({res.error})" for name, _, res in parts if res.error is not None]
    terms = set(lexical.tokenize(query))
    ranked: list[tuple[float, float, int, int, ChunkOut]] = []
    for order, (name, uri, res) in enumerate(ok):
        best = float("-inf")
        for rank in range(len(res.chunks) - 1, -1, -1):
            best = max(best, res.chunks[rank].score)
            chunk = res.chunks[rank].model_copy(update={"folder": name, "folder_uri": uri, "score": best})
            words = set(lexical.tokenize(f"{chunk.path} {chunk.symbol or ''} {chunk.content}"))
            ranked.append((best, len(terms & words) / max(len(terms), 1), rank, order, chunk))
    ranked.sort(key=lambda t: (-t[0], -t[1], t[2], t[3]))
    chunks = [c for *_, c in ranked]
    if symbol_boost and (names := lookup_symbols(query)):
        chunks = symbol_first(chunks, names)
    chunks = chunks[:top_k]
    context = format_context(
        [
            ContextChunk(f"{c.folder}/{c.path}", c.range.start.line + 1, c.range.end.line, c.symbol, c.content)
            for c in chunks
        ],
        max_chars,
        [
            b
            for name, _, res in ok
            for b in moved_blocks(res.context, name, {c.symbol for c in chunks if c.folder == name and c.symbol})
        ],
    )
    took = max((res.took_ms for _, _, res in ok), default=0.0) + (time.perf_counter() - t0) * 1000
    return RetrieveResultOut(context=context, chunks=chunks, took_ms=round(took, 2), warnings=warnings)


def chunk_out(root: Path, h: Hit) -> ChunkOut:
    """One chunk of the `rag/retrieve` payload (LSP range: 0-based, end exclusive)."""
    return ChunkOut(
        uri=(root / h.path).as_uri(),
        path=h.path,
        range=Range(start=Position(line=h.start_line - 1, character=0), end=Position(line=h.end_line, character=0)),
        symbol=h.symbol,
        kind=h.kind,
        language=h.language,
        score=round(h.score, 6),
        content=h.content,
        # The index's own folder; a multi-root workspace relabels it with the client's name.
        folder=root.name,
        folder_uri=root.as_uri(),
    )


def retrieve_result(res: RetrieveResult, root: Path, warnings: list[str] | None = None) -> RetrieveResultOut:
    """The `rag/retrieve` payload, also `ragls search --json` and the MCP tools' chunks."""
    return RetrieveResultOut(
        context=res.context,
        took_ms=round(res.took_ms, 2),
        warnings=list(warnings or []),
        chunks=[chunk_out(root, h) for h in res.hits],
    )
