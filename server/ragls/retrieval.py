"""Retrieval: query -> hybrid search in Qdrant -> symbol boost -> per-file cap -> merge
overlaps -> budgeted context."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import pathspec

from ragls import lexical
from ragls.config import RetrievalSettings
from ragls.context import ContextChunk, format_context
from ragls.embedding import Embedder
from ragls.store import SearchRequest, Store, StoredHit

_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_][\w]*)+")


class QueryError(ValueError):
    """Bad request input (reported as InvalidParams)."""


@dataclass
class Hit:
    path: str
    start_line: int  # 1-based inclusive
    end_line: int
    symbol: str | None
    kind: str
    language: str
    score: float
    content: str


@dataclass
class RetrieveResult:
    context: str
    hits: list[Hit]
    took_ms: float
    error: str | None = None


def compile_globs(globs: list[str]) -> pathspec.PathSpec:
    for g in globs:
        if g.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", g) or ".." in g.replace("\\", "/").split("/"):
            raise QueryError(f"paths: {g!r} must be a workspace-relative glob without '..'")
    try:
        return pathspec.PathSpec.from_lines("gitwildmatch", globs)
    except Exception as exc:  # pathspec raises several types for malformed patterns
        raise QueryError(f"paths: invalid glob: {exc}") from exc


def query_symbols(query: str) -> list[str]:
    """Identifiers the query names, lowercased, dotted forms included (`Invoice.total`)."""
    names = {m.group(0).replace("::", ".").lower() for m in _DOTTED.finditer(query)}
    for ident in lexical.identifiers(query):
        # Plain English words are not symbol names; identifiers have a shape.
        if "_" in ident or re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", ident) or ident in names:
            names.add(ident.lower())
    names |= {n.split(".")[-1] for n in list(names) if "." in n}
    return sorted(n for n in names if len(n) >= 3)


def _to_hit(h: StoredHit) -> Hit:
    p = h.payload
    return Hit(
        str(p.get("path", "")),
        int(p.get("start_line", 1)),
        int(p.get("end_line", 1)),
        p.get("symbol"),
        str(p.get("kind", "text")),
        str(p.get("language", "text")),
        h.score,
        str(p.get("text", "")),
    )


def _merge(a: Hit, b: Hit) -> Hit:
    """Union of two overlapping or adjacent chunks of one file, line-exact."""
    first, second = (a, b) if a.start_line <= b.start_line else (b, a)
    lines = first.content.split("\n")
    extra = second.content.split("\n")
    skip = first.end_line - second.start_line + 1  # lines of `second` already in `first`
    if second.end_line > first.end_line:
        lines.extend(extra[max(0, skip) :])
    symbol = a.symbol if a.symbol == b.symbol else (a.symbol or b.symbol)
    return Hit(
        a.path,
        first.start_line,
        max(first.end_line, second.end_line),
        symbol,
        a.kind if a.kind == b.kind else "merged",
        a.language,
        max(a.score, b.score),
        "\n".join(lines),
    )


def dedupe(hits: list[Hit], max_per_file: int) -> list[Hit]:
    out: list[Hit] = []
    per_file: dict[str, int] = {}
    for h in hits:
        merged = False
        for k, o in enumerate(out):
            if o.path == h.path and h.start_line <= o.end_line + 1 and o.start_line <= h.end_line + 1:
                out[k] = _merge(o, h)
                merged = True
                break
        if merged:
            continue
        if per_file.get(h.path, 0) >= max_per_file:
            continue
        per_file[h.path] = per_file.get(h.path, 0) + 1
        out.append(h)
    return out


def lexical_rerank(query: str, hits: list[Hit]) -> list[Hit]:
    """Cheap second stage: fused rank plus the share of query terms a chunk contains."""
    terms = set(lexical.tokenize(query))
    if not terms:
        return hits
    scored = []
    for rank, h in enumerate(hits):
        toks = set(lexical.tokenize(f"{h.path} {h.symbol or ''} {h.content}"))
        overlap = len(terms & toks) / len(terms)
        scored.append((1.0 / (10 + rank) + 0.05 * overlap, rank, h))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [h for _, _, h in scored]


def retrieve(
    store: Store,
    embedder: Embedder | None,
    settings: RetrievalSettings,
    query: str,
    top_k: int,
    max_chars: int,
    allowed_paths: list[str] | None,
    languages: list[str] | None,
    dense_available: bool = True,
) -> RetrieveResult:
    t0 = time.perf_counter()
    use_dense = embedder is not None and dense_available and settings.mode != "lexical"
    dense = embedder.embed_query(query) if use_dense and embedder is not None else None
    sparse = lexical.query_vector(query) if settings.mode != "dense" else ([], [])
    symbols = query_symbols(query) if settings.symbol_boost else []
    req = SearchRequest(
        dense=dense,
        sparse=sparse,
        limit=max(top_k * 4, 20),
        candidates=max(settings.candidates, top_k * 4),
        paths=allowed_paths,
        languages=languages,
        symbol_names=symbols,
        fusion=settings.fusion,
        weights=(settings.dense_weight, settings.lexical_weight, 2.0),
    )
    hits = [_to_hit(h) for h in store.search(req)]
    if symbols:
        # A query that names an existing definition gets that definition first.
        wanted = set(symbols)
        hits.sort(key=lambda h: not (h.symbol and ({h.symbol.lower(), h.symbol.lower().split(".")[-1]} & wanted)))
    if settings.rerank == "lexical":
        hits = lexical_rerank(query, hits)
    hits = dedupe(hits, settings.max_per_file)[:top_k]
    context = format_context(
        [ContextChunk(h.path, h.start_line, h.end_line, h.symbol, h.content) for h in hits], max_chars
    )
    return RetrieveResult(context, hits, (time.perf_counter() - t0) * 1000)
