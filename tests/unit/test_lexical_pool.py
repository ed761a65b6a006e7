"""The pooled lexical pass (worker processes) stores exactly what the in-thread pass stores,
and the status counters the indexer keeps agree with a count over the records."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from ragls.config import Settings
from ragls.index.state import Records
from ragls.index.worker import Indexer
from ragls.store.manifest import DENSE, LEXICAL, FileRecord

PY = '''"""Module {i}."""
import os


class Widget{i}:
    def render_{i}(self, width: int) -> str:
        return "x" * width

    def measure_{i}(self) -> int:
        return len(os.sep) + {i}


def helper_{i}(value):
    return value * {i}
'''
TS = """export function parseHeader{i}(line: string): string[] {{
  return line.split(":").map((s) => s.trim());
}}
"""
MD = "# Guide {i}\n\nHow to configure the widget number {i}.\n"


def _workspace(root: Path, n: int) -> None:
    for i in range(n):
        d = root / f"pkg{i % 4}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod_{i}.py").write_text(PY.format(i=i))
        (d / f"header_{i}.ts").write_text(TS.format(i=i))
        if i % 5 == 0:
            (d / f"guide_{i}.md").write_text(MD.format(i=i))
    (root / "pkg0" / "blob.py").write_bytes(b"\x00\x01binary")  # skipped: binary


def _lexical(idx: Indexer, timeout: float = 120) -> None:
    assert idx.handle.ready.wait(60)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = idx.snapshot()
        if st.phase in ("dense", "idle") and st.lexical.total and st.lexical.done >= st.lexical.total:
            return
        time.sleep(0.05)
    raise AssertionError(f"not lexical after {timeout}s: {idx.snapshot()}")


def _index(ws: Path, cache: Path, workers: int, min_files: int) -> tuple[dict[str, list[str]], dict[str, int], int]:
    idx = Indexer(ws, Settings.model_validate({"cacheDir": str(cache)}), workers=workers)
    idx.lexical.pool_min_files = min_files
    idx.start()
    try:
        _lexical(idx)
        assert idx.state.pooled_passes == (1 if workers > 1 else 0)
        with idx.state.lock:
            ids = {p: list(r.chunk_ids) for p, r in idx.state.records.items()}
        skipped = dict(idx.snapshot().skipped_by_reason)
        assert idx.handle.store is not None
        stored = idx.handle.store.count()
        return ids, skipped, stored
    finally:
        idx.stop(timeout=30)


def test_pooled_pass_stores_what_the_thread_pass_stores(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _workspace(ws, 40)
    pooled, skipped_pooled, stored_pooled = _index(ws, tmp_path / "c1", workers=2, min_files=1)
    inline, skipped_inline, stored_inline = _index(ws, tmp_path / "c2", workers=1, min_files=10**9)
    assert pooled == inline
    assert len(pooled) == 40 * 2 + 8  # every .py, .ts and .md file; the binary one is skipped
    assert skipped_pooled == skipped_inline and skipped_pooled.get("binary") == 1
    assert stored_pooled == stored_inline == sum(len(v) for v in pooled.values())


def test_pool_workers_are_gone_after_the_pass(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _workspace(ws, 20)
    idx = Indexer(ws, Settings.model_validate({"cacheDir": str(tmp_path / "c")}), workers=2)
    idx.lexical.pool_min_files = 1
    idx.start()
    try:
        _lexical(idx)
        assert idx.state.pooled_passes == 1
        deadline = time.monotonic() + 20
        while multiprocessing.active_children() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert multiprocessing.active_children() == []  # the workers exit when the pass ends
    finally:
        idx.stop(timeout=30)


def _rec(path: str, status: str, n: int) -> FileRecord:
    return FileRecord(path, "h", 1, 1, "python", status, [f"{path}-{k}" for k in range(n)], [])


def _recount(recs: Records) -> tuple[int, int, int]:
    values = list(dict.values(recs))
    return (
        sum(1 for r in values if r.status in (LEXICAL, DENSE)),
        sum(1 for r in values if r.status == DENSE),
        sum(len(r.chunk_ids) for r in values),
    )


def test_record_counters_follow_every_change() -> None:
    recs = Records([("a", _rec("a", LEXICAL, 3)), ("b", _rec("b", DENSE, 2))])
    assert (recs.lexical, recs.dense, recs.chunks) == _recount(recs) == (2, 1, 5)
    recs["c"] = _rec("c", "pending", 4)  # not searchable yet, but its chunks count
    recs["a"] = _rec("a", DENSE, 1)  # replaced: the old record's counts go
    assert (recs.lexical, recs.dense, recs.chunks) == _recount(recs) == (2, 2, 7)
    recs.set_status("c", LEXICAL)
    before = recs["b"]
    recs.set_chunk_ids("b", ["b-0"], "h2")
    assert (recs.lexical, recs.dense, recs.chunks) == _recount(recs) == (3, 2, 6)
    # A new record: a copy of the records published before keeps the old one as it was.
    assert before.chunk_ids == ["b-0", "b-1"] and (recs["b"].chunk_ids, recs["b"].hash) == (["b-0"], "h2")
    assert recs.pop("b") is not None and recs.pop("missing", None) is None
    del recs["c"]
    assert (recs.lexical, recs.dense, recs.chunks) == _recount(recs) == (1, 1, 1)
    recs.clear()
    assert (recs.lexical, recs.dense, recs.chunks) == (0, 0, 0)


def test_clean_restart_mid_backfill_embeds_nothing_twice(tmp_path: Path) -> None:
    """A restart after a clean stop skips the store scan (the manifest and the store agree);
    chunks embedded before the stop come back from the embedding cache, not the model."""
    ws = tmp_path / "ws"
    _workspace(ws, 12)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "c")})
    first = Indexer(ws, settings, workers=1)
    first.start()
    try:
        _lexical(first)
        deadline = time.monotonic() + 60
        while first.state.embeds < 8 and first.busy() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        assert first.stop(timeout=60)
    embedded_before = first.state.embeds
    total = first.snapshot().chunks
    assert embedded_before > 0
    second = Indexer(ws, settings, workers=1)
    second.start()
    try:
        _lexical(second)
        deadline = time.monotonic() + 120
        while second.busy() and time.monotonic() < deadline:
            time.sleep(0.05)
        st = second.snapshot()
        assert st.state == "ready" and st.chunks == total and st.dense.done == st.dense.total
        assert second.state.embeds == total - embedded_before  # each chunk embedded exactly once
        assert second.handle.store is not None and second.handle.store.count() == total
    finally:
        second.stop(timeout=30)


def _counting_flushes(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    from ragls.store.edge import EdgeStore

    flushed: list[int] = []
    real_flush = EdgeStore.flush

    def counting_flush(self: EdgeStore) -> None:
        flushed.append(self.count())
        real_flush(self)

    monkeypatch.setattr(EdgeStore, "flush", counting_flush)
    return flushed


def test_flushes_follow_the_points_written(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The write-ahead log a crash would replay is bounded by points: the indexer flushes every
    _FLUSH_POINTS points, not only every so many seconds."""
    import ragls.index.handle as handle_mod

    ws = tmp_path / "ws"
    _workspace(ws, 60)
    flushed = _counting_flushes(monkeypatch)
    monkeypatch.setattr(handle_mod, "_FLUSH_POINTS", 100)
    monkeypatch.setattr(handle_mod, "_FLUSH_AGE_S", 3600.0)
    idx = Indexer(ws, Settings.model_validate({"cacheDir": str(tmp_path / "cache")}), workers=1)
    idx.start()
    try:
        _lexical(idx)
        chunks = idx.snapshot().chunks
    finally:
        idx.stop(timeout=30)
    # Batches of 64 files (~120 points here) each reach the threshold: a flush after each,
    # where a time-only rule (an hour here) would not flush at all during the pass.
    during = [n for n in flushed if n < chunks]
    assert chunks > 200 and len(during) >= 2 and during == sorted(during), (chunks, flushed)


def test_a_pass_below_the_threshold_flushes_once_the_index_is_complete(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A flush syncs every file of the shard holding the GIL (a stall of every request), so
    while it works the indexer leaves its writes to the write-ahead log; the index is flushed
    once every chunk has its vector, and when the indexer stops."""
    ws = tmp_path / "ws"
    _workspace(ws, 60)
    flushed = _counting_flushes(monkeypatch)
    idx = Indexer(ws, Settings.model_validate({"cacheDir": str(tmp_path / "cache")}), workers=1)
    idx.start()
    try:
        _lexical(idx)
        # No check of `flushed` here: on a loaded machine the dense pass of these few chunks can
        # end between two polls, flushing as it should. The one flush at the end says it all: a
        # flush after the lexical pass would be a second entry (every point exists by then).
        deadline = time.monotonic() + 240
        # The backfill says `idle` and then flushes: wait for both, or the check races the flush.
        while (idx.busy() or not flushed) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # a second flush, were there one, would land by now
        st = idx.snapshot()
        assert st.state == "ready", st
        assert flushed == [st.chunks], (flushed, st.chunks)
    finally:
        idx.stop(timeout=30)  # closing the store flushes it too


def _restart(ws: Path, settings: Settings, discovery_bytes: int) -> tuple[Indexer, dict[str, list[str]]]:
    idx = Indexer(ws, settings, workers=2)
    idx.lexical.discovery_worker_bytes = discovery_bytes
    idx.start()
    _lexical(idx)
    with idx.state.lock:
        return idx, {p: list(r.chunk_ids) for p, r in idx.state.records.items()}


def test_a_large_folder_is_walked_by_a_worker_on_restart(tmp_path: Path) -> None:
    """A folder indexed before with many files is discovered by a pool worker (the walk would
    wait for the GIL the shard load holds): the scan finds what changed while the server was
    down exactly as an in-thread walk does, and no worker outlives the scan."""
    from ragls.store import previous_manifest_bytes

    ws = tmp_path / "ws"
    _workspace(ws, 30)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "c")})
    assert previous_manifest_bytes(ws, settings) == 0  # never indexed here
    first, before = _restart(ws, settings, discovery_bytes=10**12)
    first.stop(timeout=30)
    assert first.state.worker_discoveries == 0 and previous_manifest_bytes(ws, settings) > 0
    # While the server is down: one file changes, one goes, one arrives.
    (ws / "pkg1" / "mod_1.py").write_text(PY.format(i=1) + "\n\ndef added_while_down():\n    return 1\n")
    (ws / "pkg2" / "mod_2.py").unlink()
    (ws / "pkg3" / "late.py").write_text(PY.format(i=99))
    walked = {}
    for name, threshold in (("worker", 1), ("thread", 10**12)):
        idx, walked[name] = _restart(ws, settings, threshold)
        try:
            assert idx.state.worker_discoveries == (1 if name == "worker" else 0)
            assert idx.state.pooled_passes == 0  # three files: the pass ran in the indexer thread
            deadline = time.monotonic() + 20
            while multiprocessing.active_children() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert multiprocessing.active_children() == []  # the discovery worker is gone
        finally:
            idx.stop(timeout=30)
    assert walked["worker"] == walked["thread"]
    assert "pkg2/mod_2.py" not in walked["worker"] and "pkg3/late.py" in walked["worker"]
    assert walked["worker"]["pkg1/mod_1.py"] != before["pkg1/mod_1.py"]  # re-chunked
    assert len(walked["worker"]) == len(before)  # one gone, one new
