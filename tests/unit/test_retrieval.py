"""Retrieval quality machinery: stemming tokenizer and BM25 weights, fusion in a real Qdrant
Edge shard, filters, the exact-symbol boost, test-file demotion, and the golden-set runner
on a tiny golden set over the polyglot fixture."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ragls.chunking.model import embedding_text, split_humps
from ragls.config import RetrievalSettings, load_settings
from ragls.query.query_words import lookup_symbols, query_symbols
from ragls.query.retrieval import (
    DEFAULT_TUNING,
    Ask,
    Hit,
    Sources,
    Tuning,
    dedupe,
    demote,
    is_history_path,
    is_meta_path,
    is_test_path,
    lexical_weight,
    retrieve,
    symbol_first,
    tuning_for,
)
from ragls.store import PointData, SearchRequest
from ragls.store.edge import EdgeStore
from ragls.text import lexical

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


# -- tokenizer ---------------------------------------------------------------------------


def test_stemming_meets_english_and_identifiers() -> None:
    for forms in (
        ("parse", "parses", "parsed", "parsing", "parser"),
        ("validator", "validators", "validate", "validation"),
        ("run", "runs", "running"),
        ("copy", "copies"),
        ("cookie", "cookies"),
    ):
        assert len({lexical.stem(f) for f in forms}) == 1, forms
    # Short words, non-ASCII and tokens with digits or underscores are left alone.
    for word in ("is", "bus", "class", "status", "v2", "get_user", "größe"):
        assert lexical.stem(word) == word or word == "class"
    assert lexical.stem("class") == lexical.stem("classes")
    # The query's English now meets the code's identifiers.
    query = set(lexical.tokenize("Set whether or not validators are run."))
    code = set(lexical.tokenize("def set_run_validators(run): _run_validators = run"))
    assert {lexical.stem("validators"), "run"} <= query & code


def test_abbreviations_expand_to_their_word() -> None:
    toks = lexical.tokenize("func SetLevel(ctx context.Context) { std.SetLevel(lvl) }")
    assert {"std", "standard", "ctx", "context", "lvl", "level"} <= set(toks)
    # Keywords are not expanded (`var` is not a variable), nor are plain words.
    assert lexical.stem("variable") not in lexical.tokenize("var x = 1")


def test_bm25_weights_saturate_and_normalise_length() -> None:
    def weight(text: str, term: str) -> float:
        idx, vals = lexical.sparse_vector(text)
        return vals[idx.index(lexical.token_id(term))]

    once, twice, many = (weight(" ".join(["alpha"] * n + ["beta"] * 9), "alpha") for n in (1, 2, 30))
    assert once < twice < many < lexical.K1 + 1  # more occurrences help, up to a ceiling
    short = weight("alpha beta", "alpha")
    long = weight("alpha " + " ".join(f"w{i}x" for i in range(200)), "alpha")
    assert long < short  # one mention in a long chunk counts for less
    ids, vals = lexical.query_vector("alpha alpha beta")
    assert len(ids) == 2 and vals == [1.0, 1.0]


# -- dense text -------------------------------------------------------------------------


def test_embedding_text_has_symbol_and_split_humps_not_path() -> None:
    text = embedding_text("lib/helpers/parseHeaders.js", "parseHeaders", None, "const parsed = parseLine(x);")
    assert text.startswith("parse Headers\n")
    assert "parse Line" in text and "helpers/" not in text
    assert split_humps("HTTPServer getURLPath x2Y") == "HTTPServer get URLPath x2 Y"


# -- symbol boost, test demotion, dedupe ---------------------------------------------------


def test_query_symbols_only_takes_code_shaped_names() -> None:
    assert query_symbols("where is Invoice.compute_total used") == ["compute_total", "invoice.compute_total"]
    assert "parsehttpresponse" in query_symbols("what does parseHTTPResponse do")
    assert query_symbols("what does `render` do, and who calls flush()?") == ["flush", "render"]
    # English words that happen to name functions are not references.
    assert query_symbols("Define an attrs class") == []
    assert query_symbols("Returns the Session for URLs") == []
    # A module-qualified name does not degrade to its last part.
    assert "field" not in query_symbols("passed into attrs.field's eq argument")


def test_symbol_boost_applies_to_lookups_not_descriptions() -> None:
    assert lookup_symbols("where is Invoice.compute_total used") == ["compute_total", "invoice.compute_total"]
    assert lookup_symbols("what does parseHTTPResponse do?") == ["parsehttpresponse"]
    assert lookup_symbols("refund_overpayment") == ["refund_overpayment"]
    assert lookup_symbols("show me `render`") == ["render"]
    # A description that mentions a name refers to related code: no boost.
    assert lookup_symbols("Returns a CookieJar from a key/value dictionary.") == []
    assert lookup_symbols("This method is like _.assignIn except that it accepts customizer") == []
    assert lookup_symbols("Like iteritems(), but with all lowercase keys.") == []


def _hit(path: str, a: int, b: int, score: float, symbol: str | None = None) -> Hit:
    return Hit(path, a, b, symbol, "function", "python", score, "\n".join(f"L{i}" for i in range(a, b + 1)))


def test_symbol_first_moves_only_exact_definitions() -> None:
    hits = [_hit("a.py", 1, 2, 0.9, "total"), _hit("b.py", 1, 2, 0.8, "Invoice.compute_total"), _hit("c.py", 1, 2, 0.7)]
    out = symbol_first(hits, ["compute_total"])
    assert [h.path for h in out] == ["b.py", "a.py", "c.py"]
    assert symbol_first(hits, ["invoice.compute"]) == hits  # prefixes do not count


def test_tests_are_demoted_unless_the_query_asks_for_them() -> None:
    for p in (
        "tests/test_x.py",
        "pkg/x_test.go",
        "src/a.spec.ts",
        "x/__tests__/a.js",
        "src/FooTest.java",
        "src/build_test.cc",
        "src/util_unittest.cpp",
        "lib/grape/api_spec.rb",
    ):
        assert is_test_path(p), p
    for p in ("src/testing_utils_impl.py", "latest/x.py", "src/contest.py", "attest.go", "src/test.cc", "src/latest.h"):
        assert not is_test_path(p), p
    hits = [_hit("tests/test_a.py", 1, 2, 1.0), _hit("a.py", 1, 2, 0.8)]
    assert [h.path for h in demote("parse the header", hits, 0.5)] == ["a.py", "tests/test_a.py"]
    assert demote("which test covers header parsing", hits, 0.5) == hits
    assert demote("parse the header", hits, 1.0) == hits


def test_release_history_is_demoted_unless_the_query_is_about_releases() -> None:
    for p in ("CHANGELOG.md", "docs/changes.rst", "NEWS", "HISTORY.txt", "RELEASE_NOTES.md", "CHANGELOG-2.x.md"):
        assert is_history_path(p), p
    for p in ("src/history.py", "lib/changes/apply.go", "docs/news-feed.md.py", "README.md"):
        assert not is_history_path(p), p
    hits = [_hit("CHANGELOG.md", 1, 9, 1.0), _hit("src/retry.py", 1, 9, 0.6), _hit("tests/test_retry.py", 1, 9, 0.9)]
    out = demote("retry failed uploads with backoff", hits, 0.5, 1.0, 0.5)
    assert [h.path for h in out] == ["src/retry.py", "CHANGELOG.md", "tests/test_retry.py"]
    assert demote("which release added upload retries", hits, 0.5, 1.0, 0.5)[0].path == "CHANGELOG.md"
    assert demote("retry failed uploads", hits, 1.0, 1.0, 1.0) == hits


def test_repository_files_are_demoted_unless_the_query_asks_for_them() -> None:
    for p in (".github/workflows/ci.yml", "CONTRIBUTING.md", "docs/SECURITY.md", "LICENSE", ".gitlab/issue.md"):
        assert is_meta_path(p), p
    for p in ("src/license.py", "src/security/auth.go", "README.md", "docs/runbook.md", "CHANGELOG.md"):
        assert not is_meta_path(p), p
    hits = [
        _hit(".github/copilot-instructions.md", 1, 9, 1.0),
        _hit("docs/retries.md", 1, 9, 0.9),
        _hit("src/retry.py", 1, 9, 0.6),
    ]
    out = demote("retry failed uploads with backoff", hits, 1.0, 1.0, 1.0, 0.25)
    # Documentation keeps its rank: it answers questions too.
    assert [h.path for h in out] == ["docs/retries.md", "src/retry.py", ".github/copilot-instructions.md"]
    assert [h.score for h in out] == pytest.approx([0.9, 0.6, 0.25])
    # A question about the CI keeps those files where the engine put them.
    assert demote("which CI workflow runs the uploads", hits, 1.0, 1.0, 1.0, 0.25) == hits
    assert demote("retry failed uploads", hits, 1.0, 1.0, 1.0, 1.0) == hits


def test_change_intent_puts_code_before_docs_and_configuration() -> None:
    hits = [
        replace(_hit("README.md", 1, 9, 1.0), kind="section", language="markdown"),
        replace(_hit("setup.cfg", 1, 9, 0.9), kind="text", language="text"),
        _hit("src/cache.py", 1, 9, 0.5),
        replace(_hit("src/Cache.kt", 1, 9, 0.2), language="kotlin"),
    ]
    query = "Add a maxsize argument to the TTL cache"
    # Questions: documentation answers them too, so it keeps its place.
    assert demote(query, hits, *_penalties(DEFAULT_TUNING)) == hits
    out = demote(query, hits, *_penalties(tuning_for("change")))
    assert [h.path for h in out] == ["src/cache.py", "README.md", "setup.cfg", "src/Cache.kt"]
    assert [h.score for h in out] == pytest.approx([0.5, 0.3, 0.27, 0.2])
    assert tuning_for("question") == DEFAULT_TUNING and DEFAULT_TUNING.non_code_penalty == 1.0


def _penalties(t: Tuning) -> tuple[float, float, float, float, float]:
    return (t.test_penalty, t.declaration_penalty, t.history_penalty, t.meta_penalty, t.non_code_penalty)


def test_declarations_are_demoted_unless_the_query_names_a_kind_of_declaration() -> None:
    hits = [
        replace(_hit("a.py", 1, 9, 1.0, "Parser"), kind="class_header"),
        replace(_hit("a.py", 20, 30, 0.7, "Parser.parse"), kind="method"),
        replace(_hit("b.py", 1, 3, 0.6, "LIMIT"), kind="declaration"),
        replace(_hit("tests/test_a.py", 1, 5, 0.65, "test_parse"), kind="function"),
    ]
    out = demote("parse the header into fields", hits, 0.5, 0.5)
    assert [h.symbol for h in out] == ["Parser.parse", "Parser", "test_parse", "LIMIT"]
    assert [h.score for h in out] == pytest.approx([0.7, 0.5, 0.325, 0.3])
    assert [h.symbol for h in demote("which class parses the header", hits, 1.0, 0.5)] == [h.symbol for h in hits]
    assert demote("parse the header", hits, 1.0, 1.0) == hits


def test_dedupe_without_merge_keeps_neighbours_apart() -> None:
    hits = [_hit("a.py", 10, 20, 0.9), _hit("a.py", 21, 25, 0.8), _hit("a.py", 10, 20, 0.7)]
    assert [(h.start_line, h.end_line) for h in dedupe(hits, 5, merge=False)] == [(10, 20), (21, 25)]
    assert [(h.start_line, h.end_line) for h in dedupe(hits, 5)] == [(10, 25)]


def test_adjacent_chunks_merge_only_within_the_size_limit() -> None:
    # _hit's lines are "L10".."L20": 11 lines of 3-4 characters, 43 characters with newlines.
    hits = [_hit("a.py", 10, 20, 0.9), _hit("b.py", 1, 2, 0.85), _hit("a.py", 21, 25, 0.8), _hit("a.py", 15, 30, 0.7)]
    spans = lambda out: [(h.path, h.start_line, h.end_line) for h in out]  # noqa: E731
    assert spans(dedupe(hits, 5, merge_max_chars=0)) == [("a.py", 10, 30), ("b.py", 1, 2)]
    # 10-25 would be 63 characters: the adjacent chunk stays a hit of its own, at its own rank;
    # the overlapping one is folded in whatever the size (its lines are already shown).
    assert spans(dedupe(hits[:3], 5, merge_max_chars=50)) == [("a.py", 10, 20), ("b.py", 1, 2), ("a.py", 21, 25)]
    assert spans(dedupe([hits[0], hits[3]], 5, merge_max_chars=50)) == [("a.py", 10, 30)]
    assert spans(dedupe(hits[:3], 5, merge_max_chars=100)) == [("a.py", 10, 25), ("b.py", 1, 2)]
    assert DEFAULT_TUNING.merge_max_chars > 0


# -- fusion and filters in a real Qdrant Edge shard ---------------------------------------


def _unit(*xs: float) -> np.ndarray:
    v = np.zeros(8, dtype=np.float32)
    v[: len(xs)] = xs
    return v / np.linalg.norm(v)


def _point(n: int, text: str, vec: np.ndarray, path: str, language: str = "python") -> PointData:
    pid = f"00000000-0000-0000-0000-{n:012d}"
    payload = {"path": path, "language": language, "start_line": 1, "end_line": 3, "text": text, "symbol": None}
    return PointData(pid, lexical.sparse_vector(text), payload, vec)


@pytest.fixture
def shard(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = EdgeStore(tmp_path / "shard", 8)
    store.upsert(
        [
            _point(1, "retry failed uploads with backoff", _unit(0, 1), "upload.py"),  # lexical match
            _point(2, "unrelated words entirely here", _unit(1, 0.05), "dense.py"),  # dense match
            _point(3, "retry uploads", _unit(1, 0.04), "both.go", "go"),  # both
            _point(4, "nothing to see", _unit(0, 0, 1), "other.py"),
        ]
    )
    yield store
    store.close()


def test_rrf_fusion_ranks_agreement_first_and_weights_shift_it(shard: EdgeStore) -> None:
    q = SearchRequest(dense=_unit(1, 0), sparse=lexical.query_vector("retry uploads"), limit=4, candidates=4)
    order = [h.payload["path"] for h in shard.search(q)]
    assert order[0] == "both.go"
    # With k small and the lexical list weighted up, the lexical-only hit passes the dense-only one.
    lex_heavy = SearchRequest(**{**q.__dict__, "weights": (0.2, 1.0, 2.0), "rrf_k": 1})
    heavy = [h.payload["path"] for h in shard.search(lex_heavy)]
    assert heavy.index("upload.py") < heavy.index("dense.py")
    dense_heavy = SearchRequest(**{**q.__dict__, "weights": (1.0, 0.2, 2.0), "rrf_k": 1})
    heavy = [h.payload["path"] for h in shard.search(dense_heavy)]
    assert heavy.index("dense.py") < heavy.index("upload.py")
    dbsf = [h.payload["path"] for h in shard.search(SearchRequest(**{**q.__dict__, "fusion": "dbsf"}))]
    assert dbsf[0] == "both.go"


def test_filters_apply_to_every_prefetch(shard: EdgeStore) -> None:
    q = SearchRequest(dense=_unit(1, 0), sparse=lexical.query_vector("retry uploads"), limit=4, candidates=4)
    only_py = SearchRequest(**{**q.__dict__, "languages": ["python"]})
    assert {h.payload["language"] for h in shard.search(only_py)} == {"python"}
    paths = SearchRequest(**{**q.__dict__, "paths": ["upload.py", "other.py"]})
    assert {h.payload["path"] for h in shard.search(paths)} <= {"upload.py", "other.py"}
    assert shard.search(SearchRequest(**{**q.__dict__, "paths": []})) == []


def test_idf_makes_rare_terms_count_more(shard: EdgeStore) -> None:
    hits = shard.search(SearchRequest(dense=None, sparse=lexical.query_vector("backoff uploads"), limit=4))
    assert hits[0].payload["path"] == "upload.py"
    assert math.isfinite(hits[0].score) and hits[0].score > hits[-1].score


# -- the golden-set runner, end to end on the fixture -------------------------------------


def test_long_change_descriptions_demote_tests_whatever_words_they_use(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "shard", 8)
    store.upsert(
        [
            _point(1, "def retry(upload): backoff then send the upload again", _unit(0, 1), "src/upload.py"),
            _point(
                2,
                "def test_retry_upload(): upload fails, retry with backoff, expected upload sent again",
                _unit(0, 1),
                "tests/test_upload.py",
            ),
        ]
    )
    report = (
        "Upload is not sent again after a failure\n\n"
        "My test: the first upload fails and retry with backoff never sends it again.\n"
        "Expected: the upload is sent again.\nActual: nothing happens.\n"
    )
    settings = RetrievalSettings()

    def order(query: str, intent: str) -> list[str]:
        res = retrieve(Sources(store), settings, Ask(query, 5, 0, tuning=tuning_for(intent)))
        return [h.path for h in res.hits]

    try:
        # The report's words match the test best; a question may well be asking for it.
        assert order(report, "question") == ["tests/test_upload.py", "src/upload.py"]
        # As a change to make, "test" in the report asks for no test: the code comes first.
        assert order(report, "change") == ["src/upload.py", "tests/test_upload.py"]
        # A one-line change that asks for tests still gets them at full rank.
        short = "test retry upload fails backoff expected sent again"
        assert order(short, "change") == ["tests/test_upload.py", "src/upload.py"]
    finally:
        store.close()


def test_golden_runner_scores_the_fixture(tmp_path: Path) -> None:
    from ragls.evaluation.runner import run_golden

    settings = load_settings(None, ("test", {"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}}))
    res = run_golden(FIXTURES / "golden-polyglot.json", settings, baselines=True, ablations=False, quiet=True)
    assert res.queries == 7 and res.chunks > 10
    ours = res.rows["ragls (hybrid, default)"]
    assert ours["recall_at_5"] == 1.0 and ours["mrr_at_10"] >= 0.8
    assert ours["chunk_precision_at_5"] >= 0.8
    assert ours["precise_recall_at_5"] >= ours["chunk_precision_at_5"]
    assert 0.8 <= ours["ctx_recall_4k"] <= 1.0
    # Both baselines run on the same queries (on files this small a 60-line window is the
    # file, so it covers the answer but is no function hit).
    assert set(res.rows) == {
        "ragls (hybrid, default)",
        "dense only",
        "lexical only (BM25 sparse in Qdrant)",
        "BM25, 60-line windows",
        "BM25, one chunk per function",
    }
    windows, functions = res.rows["BM25, 60-line windows"], res.rows["BM25, one chunk per function"]
    assert functions["precise_recall_at_5"] > windows["precise_recall_at_5"]
    assert all(0 <= v["mrr_at_10"] <= 1 and 0 <= v["ctx_recall_4k"] <= 1 for v in res.rows.values())


def test_retrieve_defaults_are_the_measured_ones() -> None:
    s = RetrievalSettings()
    assert s.mode == "hybrid" and s.fusion == "rrf" and s.max_per_file == 5
    assert DEFAULT_TUNING == Tuning() and 1 <= DEFAULT_TUNING.rrf_k <= 60
    assert 0 < DEFAULT_TUNING.test_penalty <= 1 and 0 < DEFAULT_TUNING.declaration_penalty <= 1
    assert 0 < DEFAULT_TUNING.history_penalty <= 1
    assert 0 < DEFAULT_TUNING.meta_penalty <= 1
    assert callable(retrieve)


def test_prose_queries_weigh_lexical_down_queries_naming_code_keep_it() -> None:
    s = RetrievalSettings()
    assert lexical_weight("Return the total price of the items in the cart.", s) == pytest.approx(
        0.2 * s.lexical_weight
    )
    for query in ("Invoice compute_total", "where is parseHeader called", "what does `render` do", "Cart.total"):
        assert lexical_weight(query, s) == s.lexical_weight, query
    assert lexical_weight("how are retries done", RetrievalSettings(lexical_weight=0.5)) == pytest.approx(0.1)
