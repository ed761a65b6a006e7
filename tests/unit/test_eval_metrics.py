"""Retrieval metrics against hand-computed values."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ragls.evaluation.golden import GoldenQuery
from ragls.evaluation.metrics import (
    Hit,
    aggregate,
    chunk_precision,
    context_recall,
    evaluate_query,
    first_relevant_rank,
    hit_chars,
    is_relevant,
    latency_summary,
    mrr_at_k,
    ndcg_at_k,
    overlap,
    percentile,
    precise_recall_at_k,
    precision_at_k,
    recall_at_k,
    relative_path,
)

QUERY = GoldenQuery(id="q1", query="parse the header", files=["pkg/a.py"], symbols=["parse"], lines=[(10, 20)])
FILE_ONLY = GoldenQuery(id="q2", query="anything in b", files=["pkg/b.py"])

MISS = Hit("pkg/other.py", 10, 20)
WRONG_LINES = Hit("pkg/a.py", 30, 40)  # right file, does not overlap 10-20
INSIDE = Hit("pkg/a.py", 12, 18)  # fully inside the answer
WIDE = Hit("pkg/a.py", 1, 60)  # overlaps 11 of 60 lines


def test_overlap_counts_shared_lines_inclusively() -> None:
    assert overlap((1, 10), (10, 20)) == 1
    assert overlap((1, 9), (10, 20)) == 0
    assert overlap((12, 18), (10, 20)) == 7
    assert overlap((1, 60), (10, 20)) == 11


def test_relevance_needs_file_and_line_overlap() -> None:
    assert is_relevant(INSIDE, QUERY)
    assert is_relevant(WIDE, QUERY)
    assert not is_relevant(WRONG_LINES, QUERY)
    assert not is_relevant(MISS, QUERY)
    # Without line ranges the file alone decides.
    assert is_relevant(Hit("pkg/b.py", 500, 600), FILE_ONLY)


def test_multiple_answers_pair_files_with_their_lines() -> None:
    query = GoldenQuery(id="q3", query="same doc twice", files=["x.go", "y.go"], lines=[(1, 5), (50, 60)])
    assert is_relevant(Hit("y.go", 55, 56), query)
    # Lines of x.go's answer do not count in y.go.
    assert not is_relevant(Hit("y.go", 1, 5), query)


def test_rank_metrics_hand_computed() -> None:
    hits = [MISS, WRONG_LINES, INSIDE, MISS, WIDE, MISS]
    assert first_relevant_rank(hits, QUERY, 10) == 3
    assert recall_at_k(hits, QUERY, 1) == 0.0
    assert recall_at_k(hits, QUERY, 3) == 1.0
    assert mrr_at_k(hits, QUERY, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(hits, QUERY, 2) == 0.0
    # Two relevant hits (ranks 3 and 5) in the top 5.
    assert precision_at_k(hits, QUERY, 5) == pytest.approx(2 / 5)
    # One ideal item: DCG = 1/log2(3 + 1) = 0.5, IDCG = 1.
    assert ndcg_at_k(hits, QUERY, 10) == pytest.approx(0.5)


def test_short_result_lists_are_not_rewarded_by_precision() -> None:
    assert precision_at_k([INSIDE], QUERY, 5) == pytest.approx(0.2)
    assert precision_at_k([], QUERY, 5) == 0.0


def test_ndcg_is_at_most_one_with_several_relevant_hits() -> None:
    assert ndcg_at_k([INSIDE, WIDE, INSIDE], QUERY, 10) == pytest.approx(1.0)


def test_chunk_precision_uses_first_relevant_hit_in_top5() -> None:
    assert chunk_precision([MISS, INSIDE, WIDE], QUERY) == 1.0  # 7/7 inside
    assert chunk_precision([MISS, WIDE, INSIDE], QUERY) == 0.0  # 11/60 inside
    # Exactly half inside counts: 15-26 shares 15-20 with the answer, 6 of its 12 lines.
    assert chunk_precision([Hit("pkg/a.py", 15, 26)], QUERY) == 1.0
    assert chunk_precision([Hit("pkg/a.py", 15, 27)], QUERY) == 0.0
    # The relevant hit at rank 6 is out of reach.
    assert chunk_precision([MISS] * 5 + [INSIDE], QUERY) == 0.0
    assert chunk_precision([Hit("pkg/b.py", 1, 2)], FILE_ONLY) is None


def test_evaluate_and_aggregate_means() -> None:
    first = evaluate_query([INSIDE], QUERY)
    second = evaluate_query([MISS, MISS, WIDE], QUERY)
    third = evaluate_query([Hit("pkg/b.py", 1, 60)], FILE_ONLY)
    assert first.recall_at_1 == 1.0 and first.mrr_at_10 == 1.0
    assert second.recall_at_1 == 0.0 and second.recall_at_5 == 1.0
    assert second.mrr_at_10 == pytest.approx(1 / 3)
    summary = aggregate([first, second, third], latencies_ms=[10.0, 20.0, 30.0])
    assert summary["queries"] == 3
    assert summary["recall_at_1"] == pytest.approx(2 / 3)
    assert summary["mrr_at_10"] == pytest.approx((1 + 1 / 3 + 1) / 3)
    # The file-only query has no chunk precision; the mean is over the other two.
    assert summary["chunk_precision_at_5"] == pytest.approx(0.5)
    assert summary["latency_p50_ms"] == pytest.approx(20.0)


def test_aggregate_of_nothing_is_nan() -> None:
    summary = aggregate([])
    assert summary["queries"] == 0
    assert math.isnan(summary["mrr_at_10"])


def test_percentiles_interpolate_linearly() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    assert percentile(values, 50) == pytest.approx(5.5)
    assert percentile(values, 95) == pytest.approx(9.55)
    assert percentile(reversed(values), 0) == 1.0
    assert percentile([4.0], 95) == 4.0
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError):
        percentile(values, 101)
    assert latency_summary(values) == {
        "latency_p50_ms": pytest.approx(5.5),
        "latency_p95_ms": pytest.approx(9.55),
    }


def test_relative_path_accepts_uris_absolute_and_relative(tmp_path: Path) -> None:
    target = tmp_path / "pkg" / "a b.py"
    assert relative_path(str(target), tmp_path) == "pkg/a b.py"
    assert relative_path(target.as_uri(), tmp_path) == "pkg/a b.py"
    assert relative_path("./pkg/a.py", tmp_path) == "pkg/a.py"
    assert relative_path("/elsewhere/x.py", tmp_path) == "/elsewhere/x.py"


# ctxR@4k and precise R@5 on a tiny hand-made file: 100 lines of 19 characters (20 with the
# newline), the answer function at lines 10-20 (11 lines, half is 5.5 -> 6 lines needed).
FILE = ["x" * 19] * 100


def _lines(path: str) -> list[str]:
    return FILE if path == "pkg/a.py" else ["y" * 99] * 300


def test_hit_chars_measure_the_files_own_lines() -> None:
    assert hit_chars(Hit("pkg/a.py", 1, 10), _lines) == 200
    assert hit_chars(Hit("pkg/other.py", 1, 10), _lines) == 1000  # 99 + newline per line


def test_context_recall_needs_half_the_function_within_budget() -> None:
    assert context_recall([INSIDE], QUERY, _lines) == 1.0  # 7 of 11 lines
    assert context_recall([Hit("pkg/a.py", 10, 14)], QUERY, _lines) == 0.0  # 5 of 11
    # Two partial hits add up: 10-14 and 15-16 cover 7 lines.
    assert context_recall([Hit("pkg/a.py", 10, 14), MISS, Hit("pkg/a.py", 15, 16)], QUERY, _lines) == 1.0
    # The first hit always counts, however big (a 100-line window is 2,000 chars; fine at 1,000).
    assert context_recall([Hit("pkg/a.py", 1, 100)], QUERY, _lines, budget=1000) == 1.0
    # Four 10-line misses of 1,000 chars fill 4,000: the answer in fifth place is cut off.
    misses = [Hit("pkg/other.py", i * 10 + 1, i * 10 + 10) for i in range(4)]
    assert context_recall([*misses, INSIDE], QUERY, _lines) == 0.0
    assert context_recall([*misses[:3], INSIDE], QUERY, _lines) == 1.0
    # Taking stops at the first hit that does not fit, even if a later one would.
    big = Hit("pkg/other.py", 100, 200)  # 10,100 chars
    assert context_recall([MISS, big, INSIDE], QUERY, _lines) == 0.0
    assert context_recall([INSIDE], FILE_ONLY, _lines) is None


def test_precise_recall_counts_any_function_hit_in_top_k() -> None:
    # A wide window first (relevant, but mostly outside) and a focused hit third: chunk
    # precision looks only at the first relevant hit, precise R@5 at any hit.
    hits = [WIDE, MISS, INSIDE]
    assert chunk_precision(hits, QUERY) == 0.0
    assert precise_recall_at_k(hits, QUERY, 5) == 1.0
    assert precise_recall_at_k(hits, QUERY, 2) == 0.0
    # Exactly half inside counts: 16-25 has 5 of 10 lines in 10-20.
    assert precise_recall_at_k([Hit("pkg/a.py", 16, 25)], QUERY) == 1.0
    assert precise_recall_at_k([Hit("pkg/a.py", 16, 26)], QUERY) == 0.0
    assert precise_recall_at_k(hits, FILE_ONLY) is None


def test_evaluate_query_reports_ctx_recall_only_with_a_ruler() -> None:
    assert evaluate_query([INSIDE], QUERY).ctx_recall_4k is None
    assert evaluate_query([INSIDE], QUERY, _lines).ctx_recall_4k == 1.0


def test_summary_table_means_languages_equally() -> None:
    from ragls.frontends.cli.eval_command import summary_table

    def row(v: float, n: int) -> dict[str, float]:
        return {"queries": n, "ctx_recall_4k": v, "mrr_at_10": v, "recall_at_5": v, "precise_recall_at_5": v}

    lang_rows = {
        "go": {"ragls (hybrid, default)": row(1.0, 300), "BM25, 60-line windows": row(0.5, 300)},
        "rust": {"ragls (hybrid, default)": row(0.5, 10), "BM25, 60-line windows": row(0.0, 10)},
    }
    table = summary_table(lang_rows)
    assert "| go (300) | 1.000 | 1.000 | 1.000 | 1.000 | 0.500 |" in table
    # 300 Go questions do not outvote 10 Rust ones: (1.0 + 0.5) / 2.
    assert "| **mean over languages** | 0.750 | 0.750 | 0.750 | 0.750 | 0.250 |" in table
    assert "BM25 fn" not in table  # a system not run gets no columns
