"""Source BM25 (index/source_lexicon.py): plain BM25 over a real Edge shard's non-test source
chunks ranks files for change requests, is built again after the index changed, and lifts the
files it ranks in `retrieve` by their RRF term, for the tunings that use it only."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from ragls.config import EmbedderSettings, RetrievalSettings
from ragls.embedding import make_embedder
from ragls.index import name_rerank, source_lexicon
from ragls.index.source_lexicon import SourceLexicon
from ragls.query.retrieval import CHANGE_TUNING, DEFAULT_TUNING, Ask, Sources, retrieve
from ragls.store import PointData
from ragls.store.edge import EdgeStore
from ragls.text import lexical

CHUNKS = [
    (
        "src/parser.py",
        "python",
        "function",
        "parse_header",
        "def parse_header(line):\n    name, value = line.split(':')",
    ),
    (
        "src/parser.py",
        "python",
        "function",
        "parse_body",
        "def parse_body(stream, length):\n    return stream.read(length)",
    ),
    (
        "src/client.py",
        "python",
        "function",
        "send",
        "def send(sock, request):\n    sock.write(request.header + request.body)",
    ),
    ("src/pool.py", "python", "function", "acquire", "def acquire(pool):\n    return pool.pop()"),
    # Not source code: a test and prose match the query better and must not count.
    (
        "tests/test_parser.py",
        "python",
        "function",
        "test_parse",
        "def test_parse():\n    parse header body length stream",
    ),
    ("README.md", "markdown", "section", "Parsing", "Parse the header and body of a stream of a given length."),
]
QUERY = "Parsing a header then the body of a stream reads the wrong length"
# A bug report (mentions.is_long: 3 lines or more): the requests the source BM25 lifts files for.
REPORT = f"{QUERY}\n\nSteps: send a request whose header says one length and whose body has another.\nThe body read stops early.\n"


def _points(chunks: list[tuple[str, str, str, str, str]], start: int) -> list[PointData]:
    emb = make_embedder(EmbedderSettings())
    vecs = emb.embed_documents([c[4] for c in chunks])
    out = []
    for n, ((path, language, kind, symbol, text), vec) in enumerate(zip(chunks, vecs, strict=True), start):
        # Chunks of one file far apart: retrieve's merge of neighbours leaves them alone.
        payload = {
            "path": path,
            "language": language,
            "kind": kind,
            "symbol": symbol,
            "symbol_names": [symbol],
            "start_line": 100 * n + 1,
            "end_line": 100 * n + 2,
            "text": text,
        }
        out.append(PointData(f"00000000-0000-0000-0000-{n:012d}", lexical.sparse_vector(text), payload, vec))
    return out


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = EdgeStore(tmp_path / "shard", 384)
    s.upsert(_points(CHUNKS, 1))
    yield s
    s.close()


def test_files_are_ranked_by_their_source_code_only(store: EdgeStore) -> None:
    lex = SourceLexicon(lambda: store, lambda: 0)
    assert lex.wait_first(30)
    ranked = lex.rank(QUERY, 10)
    assert ranked[:2] == ["src/parser.py", "src/client.py"], ranked
    assert "tests/test_parser.py" not in ranked and "README.md" not in ranked
    assert lex.rank(QUERY, 1) == ["src/parser.py"]


def test_the_lexicon_is_built_again_after_the_index_changed(store: EdgeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_lexicon, "REBUILD_INTERVAL_S", 0.0)
    generation = [0]
    lex = SourceLexicon(lambda: store, lambda: generation[0])
    assert lex.wait_first(30)
    query = "decode chunked transfer encoding trailer"
    assert "src/chunked.py" not in lex.rank(query, 10)
    store.upsert(
        _points(
            [
                (
                    "src/chunked.py",
                    "python",
                    "function",
                    "decode",
                    "def decode_chunked(transfer, encoding, trailer): ...",
                )
            ],
            20,
        )
    )
    generation[0] += 1  # what IndexHandle.wrote does
    deadline = time.monotonic() + 30
    while (lex.lexicon is None or lex.lexicon.generation != 1) and time.monotonic() < deadline:
        lex.rank(query, 10)  # a query notices the change and starts the build
        time.sleep(0.05)
    assert lex.rank(query, 10)[0] == "src/chunked.py"


def test_bug_reports_lift_the_files_it_ranks_and_other_requests_do_not(store: EdgeStore) -> None:
    lex = SourceLexicon(lambda: store, lambda: 0)
    assert lex.wait_first(30)
    emb = make_embedder(EmbedderSettings())
    settings = RetrievalSettings()
    off = replace(CHANGE_TUNING, source_weight=0.0)

    def scores(tuning: object, source: SourceLexicon | None, query: str = REPORT) -> dict[tuple[str, int], float]:
        res = retrieve(Sources(store, emb, source=source), settings, Ask(query, 10, 0, tuning=tuning))  # type: ignore[arg-type]
        return {(h.path, h.start_line): h.score for h in res.hits}

    assert CHANGE_TUNING.source_files > 0 and CHANGE_TUNING.source_weight > 0
    assert DEFAULT_TUNING.source_files == 0  # questions (doc -> code) are untouched
    before, after = scores(off, lex), scores(CHANGE_TUNING, lex)
    assert scores(DEFAULT_TUNING, lex) == scores(DEFAULT_TUNING, None)
    # A one-line change (a commit subject) keeps the ranking the commit task was tuned on.
    assert scores(CHANGE_TUNING, lex, QUERY) == scores(off, lex, QUERY)
    place = {p: r for r, p in enumerate(lex.rank(REPORT, CHANGE_TUNING.source_files))}
    lifted = 0
    for key, score in before.items():
        path = key[0]
        if path in place and not path.startswith("tests/") and path != "README.md":
            # The RRF term of the file's place among the source ranking, at the tuning's weight.
            gain = name_rerank.rrf_score(place[path], CHANGE_TUNING.source_weight, CHANGE_TUNING.rrf_k)
            assert after[key] == pytest.approx(score + gain), (key, score, after[key])
            lifted += 1
    assert lifted >= 3
