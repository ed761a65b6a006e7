"""Retrieval metrics for `ragls eval`: pure functions over ranked hits and golden queries.

A hit is *relevant* to a query when its path is one of the query's answer files and, when
the query gives line ranges, its lines overlap that file's answer range. Every query has one
answer item in the ideal ranking (several answers mean "any of these"), so nDCG@10 uses
binary gains, credits only the first relevant hit and has an ideal DCG of 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol
from urllib.parse import unquote, urlparse

from ragls.evaluation.golden import GoldenQuery

__all__ = [
    "Hit",
    "HitLike",
    "QueryMetrics",
    "acc_at_k",
    "aggregate",
    "any_at_k",
    "chunk_precision",
    "context_recall",
    "evaluate_query",
    "file_mrr_at_k",
    "first_relevant_rank",
    "gold_ranks",
    "hit_chars",
    "is_relevant",
    "latency_summary",
    "mean_by",
    "mrr_at_k",
    "ndcg_at_k",
    "overlap",
    "percentile",
    "precise_recall_at_k",
    "precision_at_k",
    "recall_at_k",
    "relative_path",
]


class HitLike(Protocol):
    """Anything with a root-relative POSIX path and a 1-based inclusive line range."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    start_line: int
    end_line: int


def relative_path(path: str, root: Path) -> str:
    """Turn a hit's path (file:// URI, absolute or relative path) into a root-relative POSIX
    path comparable with GoldenQuery.files. Paths outside root are returned unchanged."""
    if path.startswith("file:"):
        path = unquote(urlparse(path).path)
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return candidate.as_posix()
    return str(PurePosixPath(candidate.as_posix()))


def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Number of lines two 1-based inclusive ranges share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]) + 1)


def _span(hit: HitLike) -> tuple[int, int]:
    return (hit.start_line, hit.end_line)


def is_relevant(hit: HitLike, query: GoldenQuery) -> bool:
    for path, lines in query.answers():
        if hit.path == path and (lines is None or overlap(_span(hit), lines) > 0):
            return True
    return False


def first_relevant_rank(hits: Sequence[HitLike], query: GoldenQuery, k: int) -> int | None:
    """1-based rank of the first relevant hit within the top k, or None."""
    for rank, hit in enumerate(hits[:k], start=1):
        if is_relevant(hit, query):
            return rank
    return None


def recall_at_k(hits: Sequence[HitLike], query: GoldenQuery, k: int) -> float:
    """1.0 when any relevant hit is in the top k (the answer is one item)."""
    return 1.0 if first_relevant_rank(hits, query, k) is not None else 0.0


def mrr_at_k(hits: Sequence[HitLike], query: GoldenQuery, k: int = 10) -> float:
    rank = first_relevant_rank(hits, query, k)
    return 0.0 if rank is None else 1.0 / rank


def precision_at_k(hits: Sequence[HitLike], query: GoldenQuery, k: int = 5) -> float:
    """Relevant hits in the top k over k (short result lists are not rewarded)."""
    return sum(1 for hit in hits[:k] if is_relevant(hit, query)) / k


def ndcg_at_k(hits: Sequence[HitLike], query: GoldenQuery, k: int = 10) -> float:
    rank = first_relevant_rank(hits, query, k)
    return 0.0 if rank is None else 1.0 / math.log2(rank + 1)


def chunk_precision(hits: Sequence[HitLike], query: GoldenQuery, k: int = 5) -> float | None:
    """1.0 when the first relevant hit in the top k lies at least half inside the answer.

    Measures whether chunks are focused on the function rather than large windows that merely
    contain it. None when the query has no line ranges (nothing to measure against)."""
    if query.lines is None:
        return None
    for hit in hits[:k]:
        best = max(
            (overlap(_span(hit), lines) for path, lines in query.answers() if path == hit.path),
            default=0,
        )
        if best > 0:
            length = hit.end_line - hit.start_line + 1
            return 1.0 if best / length >= 0.5 else 0.0
    return 0.0


def precise_recall_at_k(hits: Sequence[HitLike], query: GoldenQuery, k: int = 5) -> float | None:
    """1.0 when some hit in the top k is a *function hit*: at least half of the hit's lines lie
    inside an answer function (unlike chunk_precision, any hit of the k counts, not only the
    first relevant one). None without line ranges."""
    if query.lines is None:
        return None
    for hit in hits[:k]:
        length = hit.end_line - hit.start_line + 1
        for path, lines in query.answers():
            if path == hit.path and lines is not None and 2 * overlap(_span(hit), lines) >= length:
                return 1.0
    return 0.0


# The context a chat model is handed by default (`maxChars`).
CONTEXT_BUDGET = 4000


def hit_chars(hit: HitLike, lines_of: Callable[[str], Sequence[str]]) -> int:
    """A hit's size in characters measured on its file's own lines (newlines included), so
    every system is charged the same for the same lines whatever text it stores."""
    lines = lines_of(hit.path)
    return sum(len(line) + 1 for line in lines[max(hit.start_line - 1, 0) : hit.end_line])


def context_recall(
    hits: Sequence[HitLike],
    query: GoldenQuery,
    lines_of: Callable[[str], Sequence[str]],
    budget: int = CONTEXT_BUDGET,
) -> float | None:
    """ctxR@budget: take hits in rank order while their text fits in `budget` characters (the
    first always counts, however big); 1.0 when the taken hits cover at least half of the
    lines of some answer function. None without line ranges."""
    if query.lines is None:
        return None
    taken: list[HitLike] = []
    used = 0
    for hit in hits:
        size = hit_chars(hit, lines_of)
        if taken and used + size > budget:
            break
        taken.append(hit)
        used += size
    for path, lines in query.answers():
        if lines is None:
            continue
        covered: set[int] = set()
        for hit in taken:
            if hit.path == path:
                covered.update(range(max(hit.start_line, lines[0]), min(hit.end_line, lines[1]) + 1))
        if 2 * len(covered) >= lines[1] - lines[0] + 1:
            return 1.0
    return 0.0


@dataclass(frozen=True, slots=True)
class QueryMetrics:
    query_id: str
    recall_at_1: float
    recall_at_5: float
    recall_at_10: float
    mrr_at_10: float
    precision_at_5: float
    ndcg_at_10: float
    chunk_precision_at_5: float | None
    precise_recall_at_5: float | None = None
    ctx_recall_4k: float | None = None


def evaluate_query(
    hits: Sequence[HitLike], query: GoldenQuery, lines_of: Callable[[str], Sequence[str]] | None = None
) -> QueryMetrics:
    """All metrics of one query; ctxR@4k needs `lines_of` (path -> the file's lines) and
    sees every hit given, the others the top 10."""
    ctx = context_recall(hits, query, lines_of) if lines_of is not None else None
    hits = hits[:10]
    return QueryMetrics(
        query_id=query.id,
        recall_at_1=recall_at_k(hits, query, 1),
        recall_at_5=recall_at_k(hits, query, 5),
        recall_at_10=recall_at_k(hits, query, 10),
        mrr_at_10=mrr_at_k(hits, query, 10),
        precision_at_5=precision_at_k(hits, query, 5),
        ndcg_at_10=ndcg_at_k(hits, query, 10),
        chunk_precision_at_5=chunk_precision(hits, query, 5),
        precise_recall_at_5=precise_recall_at_k(hits, query, 5),
        ctx_recall_4k=ctx,
    )


def percentile(values: Iterable[float], pct: float) -> float:
    """Linear-interpolated percentile (numpy's default method); nan for no values."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    if not 0 <= pct <= 100:
        raise ValueError(f"percentile must be in [0, 100], got {pct}")
    position = (len(ordered) - 1) * pct / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(latencies_ms: Iterable[float]) -> dict[str, float]:
    values = list(latencies_ms)
    return {
        "latency_p50_ms": percentile(values, 50),
        "latency_p95_ms": percentile(values, 95),
    }


def aggregate(results: Iterable[QueryMetrics], latencies_ms: Iterable[float] | None = None) -> dict[str, float]:
    """Mean of every metric over queries (None values are left out of their mean), the query
    count, and latency p50/p95 when latencies are given."""
    rows = [asdict(result) for result in results]
    out: dict[str, float] = {"queries": float(len(rows))}
    names = [name for name in QueryMetrics.__dataclass_fields__ if name != "query_id"]
    for name in names:
        values = [row[name] for row in rows if row[name] is not None]
        out[name] = sum(values) / len(values) if values else math.nan
    if latencies_ms is not None:
        out.update(latency_summary(latencies_ms))
    return out


def mean_by(groups: Mapping[str, Iterable[QueryMetrics]]) -> dict[str, dict[str, float]]:
    """aggregate() per group (e.g. per project or language)."""
    return {name: aggregate(results) for name, results in groups.items()}


# File-level metrics of the issue -> files task (ragls.evaluation.issues): the answer is the set
# of files a fix changed, a system returns distinct files best first, and a fix needs *all* of
# its files, so Acc@k asks for every gold file while any@k is the weaker "one of them".


def gold_ranks(ranked: Sequence[str], gold: Collection[str]) -> tuple[int | None, int | None]:
    """(1-based rank of the first gold file, rank by which every gold file has appeared) in a
    list of distinct files; None where that never happens."""
    wanted = set(gold)
    if not wanted:
        raise ValueError("a question needs at least one gold file")
    first: int | None = None
    seen: set[str] = set()
    for rank, path in enumerate(ranked, start=1):
        if path in wanted and path not in seen:
            seen.add(path)
            first = first or rank
            if seen == wanted:
                return first, rank
    return first, None


def acc_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when every gold file is among the first k files, else 0.0."""
    _, every = gold_ranks(ranked, gold)
    return 1.0 if every is not None and every <= k else 0.0


def any_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when at least one gold file is among the first k files, else 0.0."""
    first, _ = gold_ranks(ranked, gold)
    return 1.0 if first is not None and first <= k else 0.0


def file_mrr_at_k(ranked: Sequence[str], gold: Collection[str], k: int = 10) -> float:
    """1 / rank of the first gold file within the first k files, 0.0 when none is there."""
    first, _ = gold_ranks(ranked, gold)
    return 0.0 if first is None or first > k else 1.0 / first
