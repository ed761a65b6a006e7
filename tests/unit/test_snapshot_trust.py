"""Snapshot vectors and the embedding cache (issue 51, attacks 5 and 6a), on real files and a real
SQLite cache: a snapshot's vectors live beside the model's, never over them; a model vector that
disagrees with a snapshot's distrusts the snapshot whole; a half-imported or changed file leaves
nothing; the import reads the file a batch at a time."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ragls.chunking.model import EMBED_FORMAT
from ragls.embedding.bundled import DIMENSION, model_id
from ragls.embedding.cache import AGREE, EmbeddingCache
from ragls.embedding.snapshot import Identity, SnapshotError, open_verified, read, write
from ragls.embedding.snapshot_source import ImportReport, import_snapshot

IDENTITY = Identity(model_id(), DIMENSION, EMBED_FORMAT)
NAME_KEY = "name:"


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _hash(i: int) -> str:
    return f"{i:032x}"


def _near(v: np.ndarray, cosine: float, rng: np.random.Generator) -> np.ndarray:
    """A unit vector at `cosine` from unit vector `v`."""
    noise = rng.standard_normal(v.shape).astype(np.float32)
    noise -= noise.dot(v) * v
    noise /= np.linalg.norm(noise)
    return (cosine * v + np.sqrt(1 - cosine**2) * noise).astype(np.float32)


def _cache(tmp_path: Path) -> EmbeddingCache:
    return EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite", IDENTITY.model, IDENTITY.dimension)


def _import(path: Path, cache: EmbeddingCache, tmp_path: Path) -> ImportReport:
    return import_snapshot(str(path), cache, IDENTITY, tmp_path / "cache", NAME_KEY, ImportReport(str(path)))


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_a_snapshot_never_replaces_a_vector_the_model_computed(tmp_path: Path) -> None:
    """A subtle lie (cosine 0.95, within what the check lets through) about a chunk this machine
    embedded: the import takes the snapshot, but every reader still gets the model's vector."""
    rng = np.random.default_rng(1)
    mine, other = _unit(rng, 2)
    cache = _cache(tmp_path)
    cache.put_many({_hash(1): mine})
    subtle = _near(mine, 0.95, rng)
    path = tmp_path / "subtle.snapshot"
    write(path, IDENTITY, {_hash(1): subtle, _hash(2): other})
    assert _import(path, cache, tmp_path).state == "imported"
    got = cache.get_many([_hash(1), _hash(2)])
    assert np.array_equal(got[_hash(1)], mine)  # the model's, exactly
    assert _cos(got[_hash(2)], other) > 0.9999  # the snapshot's, where the model computed none
    assert cache.get_snapshot([_hash(1), _hash(2)]).keys() == {_hash(2)}
    assert cache.get_own([_hash(2)]) == {}


def test_a_snapshot_that_disagrees_with_the_model_at_import_is_refused_whole(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    vecs = _unit(rng, 50)
    cache = _cache(tmp_path)
    cache.put_many({_hash(0): vecs[0]})
    path = tmp_path / "liar.snapshot"
    write(path, IDENTITY, {_hash(i): vecs[(i + 1) % 50] if i == 0 else vecs[i] for i in range(50)})
    report = _import(path, cache, tmp_path)
    assert report.state == "failed" and report.distrusted and "distrusted" in (report.message or "")
    assert cache.get_snapshot([_hash(i) for i in range(50)]) == {}  # none of its vectors counts
    again = _import(path, cache, tmp_path)  # the same file again: refused at once
    assert again.state == "failed" and again.distrusted


def test_a_computed_vector_replaces_a_snapshot_row_and_a_lie_found_later_distrusts_it(tmp_path: Path) -> None:
    """A fresh cache takes a snapshot without anything to compare; later the model embeds one of
    its chunks (another folder, an edit back): an agreeing vector replaces the snapshot's row, a
    disagreeing one distrusts the snapshot and every other row of it goes."""
    rng = np.random.default_rng(3)
    vecs = _unit(rng, 10)
    cache = _cache(tmp_path)
    path = tmp_path / "s.snapshot"
    write(path, IDENTITY, {_hash(i): vecs[i] for i in range(10)}, {NAME_KEY + _hash(0): vecs[0]})
    assert _import(path, cache, tmp_path).state == "imported"
    cache.put_many({_hash(0): _near(vecs[0], 0.99, rng)})  # agrees: the model's row replaces it
    assert cache.caught() == [] and _hash(0) in cache.get_own([_hash(0)])
    assert len(cache.get_snapshot([_hash(i) for i in range(10)])) == 9
    cache.put_many({_hash(1): _near(vecs[1], AGREE - 0.2, rng)})  # disagrees
    caught = cache.caught()
    assert len(caught) == 1 and "disagrees" in caught[0].reason and caught[0].source == str(path)
    assert cache.get_snapshot([_hash(i) for i in range(10)]) == {}
    assert _import(path, cache, tmp_path).distrusted


def test_an_index_that_used_a_snapshot_later_distrusted_is_told_which_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    cache = _cache(tmp_path)
    path = tmp_path / "s.snapshot"
    write(path, IDENTITY, {_hash(0): _unit(rng, 1)[0]})
    report = _import(path, cache, tmp_path)
    assert report.snapshot is not None
    cache.record_uses("index-a", {report.snapshot: {"a.py", "b.py"}})
    cache.record_uses("index-b", {report.snapshot: {"c.py"}})
    assert cache.distrusted_uses("index-a") == (set(), [])  # trusted: nothing to do
    cache.distrust(report.snapshot, "a lie")
    paths, snapshots = cache.distrusted_uses("index-a")
    assert paths == {"a.py", "b.py"} and [s.reason for s in snapshots] == ["a lie"]
    assert cache.distrusted_uses("index-a") == (set(), [])  # told once
    assert cache.distrusted_uses("index-b")[0] == {"c.py"}


def test_rows_of_an_unfinished_import_are_never_read(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    cache = _cache(tmp_path)
    sid, state, _ = cache.begin_snapshot("content-1", "half.snapshot", 2)
    assert state == "importing"
    cache.put_snapshot(sid, [_hash(0), _hash(1)], _unit(rng, 2))
    assert cache.get_many([_hash(0), _hash(1)]) == {}  # a crash here leaves nothing readable
    again, state, _ = cache.begin_snapshot("content-1", "half.snapshot", 2)  # the next try starts over
    assert (again, state) == (sid, "importing") and cache.get_snapshot([_hash(0)]) == {}
    cache.put_snapshot(sid, [_hash(0)], _unit(rng, 1))
    assert cache.trust_snapshot(sid) and cache.get_snapshot([_hash(0), _hash(1)]).keys() == {_hash(0)}


def test_the_reader_gives_back_what_the_writer_wrote_a_batch_at_a_time(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    vecs, names = _unit(rng, 1000), _unit(rng, 300)
    path = tmp_path / "s.snapshot"
    write(path, IDENTITY, {_hash(i): vecs[i] for i in range(1000)}, {_hash(i): names[i] for i in range(300)})
    with open_verified(path, IDENTITY) as f:
        got = [b for b in f.batches(f.vectors, size=128)]
        named = [b for b in f.batches(f.names, size=128)]
        f.check_unchanged()
    assert [len(h) for h, _ in got] == [128] * 7 + [104] and [len(h) for h, _ in named] == [128, 128, 44]
    hashes = [h for part, _ in got for h in part]
    assert hashes == sorted(_hash(i) for i in range(1000))
    mat = np.concatenate([m for _, m in got])
    assert min(_cos(mat[i], vecs[int(h, 16)]) for i, h in enumerate(hashes)) > 0.9999
    whole = read(path, IDENTITY)
    assert whole.hashes == hashes and np.array_equal(whole.vectors, mat)


def test_a_file_changed_after_its_checksum_was_verified_is_not_taken(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vecs = _unit(rng, 100)
    path = tmp_path / "s.snapshot"
    write(path, IDENTITY, {_hash(i): vecs[i] for i in range(100)})
    with open_verified(path, IDENTITY) as f:
        with open(path, "r+b") as fh:  # written in place between the two passes
            fh.seek(-10, 2)
            fh.write(b"\x7f" * 10)
        list(f.batches(f.vectors))
        with pytest.raises(SnapshotError, match="changed while it was read"):
            f.check_unchanged()
    cache = _cache(tmp_path)
    assert _import(path, cache, tmp_path).state == "failed"  # and now its checksum fails
    assert cache.get_many([_hash(i) for i in range(100)]) == {}


def test_an_import_holds_a_batch_never_the_file(tmp_path: Path) -> None:
    """Attack 6a: a 231 MiB snapshot took 1.8 GB to import (read whole, dequantised whole). Now
    the import's Python heap stays a batch (~20 MB) whatever the file's size; the file here is
    48 MB, the whole of it dequantised would be 4 times that. The process's RSS for a 231 MiB
    file is measured by `python -m bench.snapimport`."""
    rng = np.random.default_rng(8)
    n = 100_000
    mat = _unit(rng, n)
    path = tmp_path / "big.snapshot"
    write(path, IDENTITY, {_hash(i): mat[i] for i in range(n)}, {_hash(i): mat[i] for i in range(0, n, 4)})
    del mat
    size = path.stat().st_size
    cache = _cache(tmp_path)
    tracemalloc.start()
    try:
        report = _import(path, cache, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.state == "imported" and report.vectors == n
    assert peak < 0.75 * size, f"the import held {peak / 2**20:.0f} MB for a {size / 2**20:.0f} MB file"
