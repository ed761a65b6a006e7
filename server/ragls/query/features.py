"""What the learned ranker knows of each candidate chunk: its raw signals (where each list ranked
it, its name's similarity, what the query mentions, the file's history) and what the query is
like (prose or code names, long or short, a question or a change), as one row of numbers.

The same function makes the rows a query is ranked by and the rows the ranker is trained on
(scripts/ranker), so training and serving cannot drift apart. Ranks enter as reciprocal-rank
terms at two offsets (1/(5+r), 1/(60+r)): the first says "near the top", the second "anywhere in
the list", which is what hand-set RRF weights approximated with one offset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ragls.text import lexical
from ragls.text.languages import is_code
from ragls.text.path_kinds import is_history_path, is_meta_path, is_test_path

# Chunks that declare rather than implement: a class or its header (fields, doc), a type,
# constant or variable declaration. A question about behaviour wants the function that does it,
# and a documented class around an undocumented method out-ranks the method on the doc's words.
DECLARATIVE_KINDS = frozenset({"class", "class_header", "declaration"})
_WINDOW_KINDS = frozenset({"text", "window", "section"})


@dataclass
class Signals:
    """One candidate's raw signals. Ranks are 0-based; None: not in that list."""

    path: str
    start_line: int
    end_line: int
    kind: str
    language: str
    symbol: str | None
    content: str
    fused_rank: int
    fused_score: float = 0.0  # the engine's weighted RRF of the dense, lexical and name lists
    dense_rank: int | None = None
    sparse_rank: int | None = None
    name_sim: float | None = None  # cosine of the query to the chunk's name vector
    symbol_named: bool = False  # an exact definition name a lookup query spells out
    mention_rank: int | None = None  # the file's place among the files the query names
    history_rank: int | None = None  # the file's place in the git history's ranking
    source_rank: int | None = None  # the file's place in the source BM25's ranking


@dataclass(frozen=True)
class QueryKind:
    """What the query is like; each is a 0/1 feature and gates others."""

    long: bool  # a bug report, a change description with a body (mentions.is_long)
    prose: bool  # names no code (retrieval.query_symbols is empty)
    lookup: bool  # a lookup of a name (retrieval.lookup_symbols is not empty)
    change: bool  # intent "change": files to edit, not an explanation
    asks_tests: bool
    asks_declarations: bool
    asks_history: bool
    asks_meta: bool
    terms: frozenset[str] = field(default_factory=frozenset)


def _rr(rank: int | None, k: int) -> float:
    return 0.0 if rank is None else 1.0 / (k + rank + 1)


def _overlap(terms: frozenset[str], c: Signals) -> float:
    if not terms:
        return 0.0
    toks = set(lexical.tokenize(f"{c.path} {c.symbol or ''} {c.content}"))
    return len(terms & toks) / len(terms)


def _row(q: QueryKind, c: Signals) -> list[float]:
    test, decl = is_test_path(c.path), c.kind in DECLARATIVE_KINDS
    history, meta = is_history_path(c.path), is_meta_path(c.path)
    code = is_code(c.language)
    sparse5, dense5 = _rr(c.sparse_rank, 5), _rr(c.dense_rank, 5)
    name = c.name_sim if c.name_sim is not None else 0.0
    return [
        dense5,
        _rr(c.dense_rank, 60),
        float(c.dense_rank is None),
        sparse5,
        _rr(c.sparse_rank, 60),
        float(c.sparse_rank is None),
        sparse5 * q.prose,  # BM25 over an English question's words is mostly noise
        dense5 * q.long,
        sparse5 * q.long,
        _rr(c.fused_rank, 5),
        math.log(c.fused_score + 1e-4),  # the fusion's own score: the demotions scaled it, here they add
        name,
        name * q.prose,
        float(c.name_sim is None),
        float(c.symbol_named),
        _rr(c.mention_rank, 5),
        _rr(c.history_rank, 5),
        _rr(c.source_rank, 5),
        float(test),
        float(test and (q.asks_tests and not q.long)),
        float(test and q.long),
        float(decl),
        float(decl and (q.asks_declarations or q.change)),
        float(history and not q.asks_history),
        float(meta and not q.asks_meta),
        float(not code),
        float(not code and q.change),
        float(c.kind in _WINDOW_KINDS),
        math.log1p(len(c.content)) / 10,
        _overlap(q.terms, c),
    ]


FEATURES = (
    "dense_rr5",
    "dense_rr60",
    "dense_absent",
    "sparse_rr5",
    "sparse_rr60",
    "sparse_absent",
    "sparse_rr5_prose",
    "dense_rr5_long",
    "sparse_rr5_long",
    "fused_rr5",
    "log_fused",
    "name_sim",
    "name_sim_prose",
    "name_absent",
    "symbol_named",
    "mention_rr5",
    "history_rr5",
    "source_rr5",
    "test",
    "test_asked",
    "test_long",
    "declaration",
    "declaration_asked_or_change",
    "history_file",
    "meta_file",
    "non_code",
    "non_code_change",
    "window",
    "log_chars",
    "term_overlap",
)


def featurize(q: QueryKind, candidates: list[Signals]) -> np.ndarray:
    """One row per candidate, in FEATURES' order."""
    if not candidates:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    return np.asarray([_row(q, c) for c in candidates], dtype=np.float32)
