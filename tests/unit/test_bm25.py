"""BM25 baseline: scoring, ranking sanity and line windows."""

from __future__ import annotations

import math

import pytest

from ragls.evaluation.bm25 import BM25Index, Document, ScoredDocument, simple_tokenize, windows

DOCS = [
    Document("a", "a.py", 1, 3, "def parse_header(line): return line.split(':')"),
    Document("b", "b.py", 1, 2, "def connect(host, port): open a socket to host"),
    Document("c", "c.py", 1, 4, "header header header parsing of mail header fields"),
    Document("d", "d.py", 1, 1, "unrelated text about gardening"),
]


def test_simple_tokenizer_lowercases_word_runs() -> None:
    assert simple_tokenize("Parse_Header(line): OK-42") == ["parse_header", "line", "ok", "42"]


def test_scores_match_the_okapi_formula() -> None:
    index = BM25Index(DOCS)
    n, df = 4, 1  # "socket" appears only in b
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    assert index.idf("socket") == pytest.approx(idf)
    lengths = [len(simple_tokenize(d.text)) for d in DOCS]
    avgdl = sum(lengths) / n
    k1, b, tf = 1.2, 0.75, 1
    expected = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[1] / avgdl))
    hits = index.search("socket", k=5)
    assert [h.doc_id for h in hits] == ["b"]
    assert hits[0].score == pytest.approx(expected)


def test_ranking_prefers_more_matching_and_rarer_terms() -> None:
    index = BM25Index(DOCS)
    hits = index.search("mail header", k=10)
    assert hits[0].doc_id == "c"  # both terms, header three times
    assert {h.doc_id for h in hits} == {"c"}  # "header" alone is in no other doc's tokens
    hits = index.search("connect to host", k=10)
    assert hits[0].doc_id == "b"
    assert index.search("nothing matches zzz", k=10) == []


def test_top_k_cut_and_deterministic_ties() -> None:
    same = [Document(str(i), f"f{i}.py", 1, 1, "alpha beta") for i in range(20)]
    index = BM25Index(same)
    hits = index.search("alpha", k=5)
    assert [h.doc_id for h in hits] == ["0", "1", "2", "3", "4"]
    assert index.search("alpha", k=0) == []


def test_duplicate_query_terms_count_once() -> None:
    index = BM25Index(DOCS)
    once = index.search("socket", k=1)[0].score
    assert index.search("socket socket socket", k=1)[0].score == pytest.approx(once)


def test_plain_tuples_and_custom_tokenizer() -> None:
    def camel_split(text: str) -> list[str]:
        out: list[str] = []
        for word in text.replace("_", " ").split():
            out.extend(part.lower() for part in word.split("-"))
        return out

    index = BM25Index([("x", "x.py", 1, 1, "read_file now"), ("y", "y.py", 1, 1, "write")], tokenizer=camel_split)
    hits = index.search("file", k=3)
    assert [h.doc_id for h in hits] == ["x"]
    assert isinstance(hits[0], ScoredDocument)
    assert (hits[0].path, hits[0].start_line, hits[0].end_line) == ("x.py", 1, 1)


def test_empty_index_returns_nothing() -> None:
    assert BM25Index([]).search("anything") == []


def test_windows_cover_every_line_once() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 131)) + "\n"  # 130 lines
    docs = windows("src/m.py", text, size=60)
    assert [(d.start_line, d.end_line) for d in docs] == [(1, 60), (61, 120), (121, 130)]
    assert docs[0].doc_id == "src/m.py:1-60"
    assert docs[1].text.split("\n")[0] == "line 61"
    assert docs[2].text.split("\n")[-1] == "line 130"


def test_windows_with_overlap_and_edge_cases() -> None:
    text = "\n".join(str(i) for i in range(1, 11))  # 10 lines, no final newline
    docs = windows("f", text, size=4, overlap=2)
    assert [(d.start_line, d.end_line) for d in docs] == [(1, 4), (3, 6), (5, 8), (7, 10)]
    assert windows("f", "", size=60) == []
    assert [(d.start_line, d.end_line) for d in windows("f", "one line")] == [(1, 1)]
    with pytest.raises(ValueError):
        windows("f", text, size=4, overlap=4)


def test_function_documents_one_per_function_and_windows_otherwise() -> None:
    from ragls.evaluation.bm25 import function_documents

    source = (
        "class Box:\n"
        "    def area(self):\n"
        "        def inner():\n"
        "            return 1\n"
        "        return inner()\n"
        "\n"
        "def top():\n"
        "    return 2\n"
    )
    docs = function_documents("box.py", "python", source)
    assert [(d.start_line, d.end_line) for d in docs] == [(2, 5), (7, 8)]  # inner stays in area
    assert docs[1].text == "def top():\n    return 2"
    go = function_documents("m.go", "go", "package m\n\nfunc (s *S) Get() int {\n\treturn 1\n}\n")
    assert [(d.start_line, d.end_line) for d in go] == [(3, 5)]
    # No functions, or no grammar: 60-line windows.
    assert [(d.start_line, d.end_line) for d in function_documents("c.toml", None, "a = 1\n" * 70)] == [
        (1, 60),
        (61, 70),
    ]


def test_compact_keeps_the_ranking_and_drops_the_texts() -> None:
    full, compact = BM25Index(DOCS), BM25Index(DOCS)
    compact.compact()
    for query in ("parse header line", "socket host port", "header fields mail"):
        a, b = full.search(query, 4), compact.search(query, 4)
        assert [(d.path, d.start_line) for d in a] == [(d.path, d.start_line) for d in b]
        assert [d.score for d in b] == pytest.approx([d.score for d in a], rel=1e-6)
    assert all(d.text == "" for d in compact.documents)
