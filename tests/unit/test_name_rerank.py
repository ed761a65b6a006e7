"""The name rerank (ragls.index.name_rerank): its RRF term is the engine's own formula, it reorders
only the first hits and only by a bounded amount, and the indexer leaves every chunk's name
vector (from the chunk's own forward pass) in the embedding cache, so a query does not run the
model for them."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ragls.chunking.model import embedding_text, name_text
from ragls.config import Settings
from ragls.embedding.cache import EmbeddingCache
from ragls.index.name_rerank import NAME_KEY, name_vectors, rerank, rerank_hits, rrf_score, usable
from ragls.index.worker import Indexer
from ragls.query.answer import answer
from ragls.store import PointData, SearchRequest, StoredHit
from ragls.store.edge import EdgeStore
from ragls.text import lexical
from tests.waiting import until


def _unit(*xs: float) -> np.ndarray:
    v = np.zeros(8, dtype=np.float32)
    v[: len(xs)] = xs
    return v / np.linalg.norm(v)


def test_the_rrf_term_is_the_engines_weighted_rrf(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "shard", 8)
    texts = ["retry failed uploads", "upload queue", "retry loop", "unrelated words", "uploads retry backoff"]
    store.upsert(
        [
            PointData(
                f"00000000-0000-0000-0000-{n:012d}",
                lexical.sparse_vector(t),
                {"path": f"f{n}.py", "language": "python", "start_line": 1, "end_line": 2, "text": t},
                _unit(1, n * 0.3, 0.1 * (n % 2)),
            )
            for n, t in enumerate(texts)
        ]
    )
    try:
        dense, sparse = _unit(1, 0.5), lexical.query_vector("retry uploads")
        weights, k = (1.0, 0.25, 2.0), 5
        fused = store.search(SearchRequest(dense=dense, sparse=sparse, limit=5, candidates=5, weights=weights, rrf_k=k))
        d = [h.id for h in store.search(SearchRequest(dense=dense, sparse=([], []), limit=5, candidates=5))]
        s = [h.id for h in store.search(SearchRequest(dense=None, sparse=sparse, limit=5, candidates=5))]
        for h in fused:
            expected = (rrf_score(d.index(h.id), weights[0], k) if h.id in d else 0.0) + (
                rrf_score(s.index(h.id), weights[1], k) if h.id in s else 0.0
            )
            assert h.score == pytest.approx(expected, rel=1e-5)
    finally:
        store.close()


def _stored(n: int, score: float) -> StoredHit:
    return StoredHit(f"id{n}", score, {"symbol": f"s{n}", "text": f"def s{n}(): pass", "text_hash": f"h{n}"})


def test_rerank_reorders_close_hits_by_name_and_leaves_the_rest() -> None:
    q = _unit(1)
    hits = [
        _stored(0, 0.40),
        _stored(1, 0.39),  # best name, one small step behind: passes hit 0
        _stored(2, 0.10),  # second-best name, far behind: stays behind 0 and 1
        _stored(3, 0.05),  # not reranked (beyond the names given)
    ]
    names = np.stack([_unit(0, 1), _unit(1), _unit(1, 0.5)])
    out = rerank(hits, q, names, weight=0.25, k=5)
    assert [h.id for h in out] == ["id1", "id0", "id2", "id3"]
    assert out[0].score == pytest.approx(0.39 + rrf_score(0, 0.25, 5))
    assert out[3] == hits[3]
    assert rerank(hits, q, np.zeros((0, 8), dtype=np.float32), 0.25, 5) == hits


SRC = '''def pad_line(line, width):
    """Pad a line to the given width."""
    return line.ljust(width)


def count_words(text):
    """Number of words in a text."""
    return len(text.split())
'''


def test_the_indexer_caches_name_vectors_and_queries_use_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "text_utils.py").write_text(SRC)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}})
    idx = Indexer(ws, settings)
    idx.start()
    try:
        until(lambda: idx.snapshot().state == "ready", 120)
        assert idx.handle.store is not None and idx.handle.cache is not None and idx.handle.embedder is not None
        stored = idx.handle.store.retrieve(sorted(idx.state.records["text_utils.py"].chunk_ids))
        assert len(stored) >= 2 and idx.state.embeds_names >= len(stored)
        keys = [NAME_KEY + h.payload["text_hash"] for h in stored]
        assert set(idx.handle.cache.get_many(keys)) == set(keys)

        hits_before = (idx.handle.cache.hits, idx.handle.cache.misses)
        vecs = name_vectors(stored, idx.handle.cache)
        assert vecs is not None and vecs.shape == (len(stored), idx.handle.embedder.dimension)
        assert (idx.handle.cache.hits, idx.handle.cache.misses) == hits_before  # the status's hit rate is the indexer's
        # The cached name vector is the head of the chunk's own forward pass: not its whole
        # vector, and the same as pooling that head again now (not bit for bit: the int8 graph
        # quantizes activations per call, so a batch's other rows move it slightly).
        p = stored[0].payload
        text = embedding_text(p["path"], p.get("symbol"), p.get("signature"), p["text"])
        whole, head = idx.handle.embedder.embed_with_names([text], [name_text(p.get("symbol"), p["text"])])  # type: ignore[attr-defined]
        assert float(head[0] @ vecs[0]) > 0.98
        assert float(whole[0] @ head[0]) < 0.99
        # A hit whose name vector is not cached (its chunk still waits for the dense pass) is
        # not embedded while the query waits: the fused ranking answers as it is.
        other = StoredHit("x", 0.1, {"symbol": "zq_unseen", "text": "def zq_unseen(): pass", "text_hash": "zq"})
        assert name_vectors([*stored, other], idx.handle.cache) is None
        mixed = [stored[1], other, stored[0]]
        assert rerank_hits(mixed, vecs[0], idx.handle.cache, 10, 0.25, 5) == mixed
        assert NAME_KEY + "zq" not in idx.handle.cache.get_many([NAME_KEY + "zq"], count=False)
        # With every name vector there, the first hits are ranked again.
        assert rerank_hits(stored[::-1], vecs[0], idx.handle.cache, 10, 0.25, 5)[0].id == stored[0].id

        res = answer(idx.handle, settings.retrieval, ws, "how many words does a text have", 5, 4000)
        assert res.error is None and res.chunks[0].symbol == "count_words"
        # A failing name lookup leaves the fused ranking as it was instead of failing the query.
        broken = EmbeddingCache(tmp_path / "broken.sqlite", "m", 384)
        broken.close()
        assert rerank_hits(stored, vecs[0], broken, 10, 0.25, 5) == stored
    finally:
        assert idx.stop(timeout=30)


def test_a_rebuild_embeds_name_vectors_a_cache_from_before_lacks(tmp_path: Path) -> None:
    """Vectors cached before name vectors existed are embedded again by the dense pass, so a
    rebuilt index has every name vector (queries never embed them)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "text_utils.py").write_text(SRC)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}})

    def build() -> list[str]:
        idx = Indexer(ws, settings)
        idx.start()
        try:
            until(lambda: idx.snapshot().state == "ready", 120)
            assert idx.handle.store is not None and idx.handle.cache is not None
            stored = idx.handle.store.retrieve(sorted(idx.state.records["text_utils.py"].chunk_ids))
            keys = [NAME_KEY + h.payload["text_hash"] for h in stored]
            return sorted(set(keys) - set(idx.handle.cache.get_many(keys, count=False)))
        finally:
            assert idx.stop(timeout=30)

    assert build() == []
    dbs = list((tmp_path / "cache").rglob("*.sqlite"))
    removed = 0
    for db in dbs:
        con = sqlite3.connect(db)
        with con:
            if con.execute("SELECT name FROM sqlite_master WHERE name = 'emb'").fetchone():
                removed += con.execute("DELETE FROM emb WHERE key LIKE ?", (f"%|{NAME_KEY}%",)).rowcount
        con.close()
    assert removed >= 2  # the dense vectors stay cached, as a cache from before would have them
    shutil.rmtree(tmp_path / "cache" / "index")  # the index goes: rebuilt from the files and the cache
    assert build() == []


def test_http_providers_skip_it(tmp_path: Path) -> None:
    class _Remote:
        provider = "openai"

    cache = EmbeddingCache(tmp_path / "e.sqlite", "m", 8)
    try:
        assert not usable(_Remote(), cache)  # type: ignore[arg-type]
        assert not usable(None, cache)
    finally:
        cache.close()
