"""Embedded Qdrant (qdrant-edge-py): one shard per workspace and model, in-process."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import qdrant_edge as qe

from ragls.private import private_dirs
from ragls.store.base import (
    DENSE,
    LEXICAL,
    PointData,
    SearchRequest,
    StoreCorrupt,
    StoredHit,
    StoreError,
    StoreFull,
    StoreLocked,
)
from ragls.store.edge_create import payload_indexes, shard_config
from ragls.system import memory
from ragls.system.child import failure, module_command
from ragls.system.foreground import FOREGROUND

# Qdrant Edge writes through memory maps: a write past the free space kills the process with
# SIGBUS instead of raising. So every write is checked against the free space first. Measured
# on tmpfs: a new shard takes ~7.3 MB, a point ~2x its raw size; both are charged with room.
_CREATE_BYTES = 8 << 20
_CREATE_TIMEOUT_S = 60.0
_MARGIN_BYTES = 4 << 20
_GROWTH = 3
# Deleted points keep counting in the shard's BM25 statistics (the document count and each
# term's document frequency behind the IDF modifier) until the shard is loaded again: every edit
# deletes a file's old chunks, so the terms of the files being worked on would lose weight all
# session. vacuum() reloads the shard once this many deletions have accumulated (at least
# _VACUUM_MIN, else _VACUUM_SHARE of the points); a reload takes ~80 ms at 3,000 points.
_VACUUM_MIN = 100
_VACUUM_SHARE = 0.02
# Points converted and written per GIL slice: ~1.5 ms of GIL at 16 (~5 ms at 64), and between
# slices a request being answered goes first (system/foreground.py).
_SLICE = 16
# Written pages are unmapped from the server (release_pages) at most this often: each call reads
# the process's memory map (~1 ms) and zaps the pages written since (~0.1 ms per MB).
_RELEASE_EVERY_S = 2.0


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def _create_in_child(directory: Path, dimension: int) -> None:
    """A new shard, made by a child process off this process's GIL (store/edge_create.py)."""
    try:
        done = subprocess.run(
            module_command("ragls.store.edge_create", str(directory), str(dimension)),
            cwd=directory.parent,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_CREATE_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise StoreError(f"cannot create the index at {directory}: {exc}") from exc
    if done.returncode != 0:
        why = failure(done.stderr, done.returncode, "the shard creator")
        raise StoreError(f"cannot create the index at {directory}: {why}")


class EdgeStore:
    kind = "edge"

    def __init__(self, directory: Path, dimension: int) -> None:
        self.location = str(directory)
        self.dimension = dimension
        # 0700 whatever the umask: the shard's payloads hold the code's text (private.py).
        private_dirs(directory.parent)
        self._dir = directory.parent
        self._readers = 0
        self._closed = False
        self._reloading = False
        self._deleted = 0  # points deleted since the shard was loaded (vacuum)
        self._released_at = 0.0
        self._load_config: qe.EdgeConfig | None = None  # a new shard stores its config
        self._gate = threading.Condition()  # searches vs close
        try:
            if (directory / "wal").exists() or any(directory.glob("segments*")):
                self._ensure_space(0)
                try:
                    # The shard's own stored config: an index written before float16 storage
                    # keeps its float32 vectors (a config passed here must match exactly).
                    stored = (directory / "edge_config.json").is_file()
                    self._load_config = None if stored else shard_config(dimension)
                    self._shard = qe.EdgeShard.load(str(directory), self._load_config)
                except Exception as exc:
                    if "WouldBlock" in str(exc):
                        raise
                    raise StoreCorrupt(f"cannot load the index at {directory}: {exc}") from exc
            else:
                self._ensure_space(_CREATE_BYTES, growth=1)
                _create_in_child(directory, dimension)
                self._shard = qe.EdgeShard.load(str(directory), None)
        except StoreError:
            raise
        except Exception as exc:  # the binding raises plain Exception
            if "WouldBlock" in str(exc):
                raise StoreLocked(f"index at {directory} is in use by another ragls process") from exc
            raise StoreError(f"cannot open index at {directory}: {exc}") from exc
        # Writes come from the indexer thread only; the lock keeps flush/close from racing them.
        self._write = threading.Lock()
        payload_indexes(self._shard)  # a new shard's; a no-op where they exist
        # A loaded shard has read all of its files through its maps (~300 MB at 150,000 chunks).
        self.release_pages(force=True)

    def _ensure_space(self, nbytes: int, growth: int = _GROWTH) -> None:
        """Refuse (StoreFull) a write that could run the filesystem out of space."""
        need = growth * nbytes + _MARGIN_BYTES
        try:
            free = shutil.disk_usage(self._dir).free
        except OSError as exc:
            raise StoreError(f"cannot check free space in {self._dir}: {exc}") from exc
        if free < need:
            raise StoreFull(
                f"no space left in {self._dir}: {_mb(free)} free, about {_mb(need)} needed to continue "
                "(free some space; indexing resumes by itself)",
                need,
                str(self._dir),
            )

    def _point_bytes(self, p: PointData) -> int:
        text = p.payload.get("text", "")
        return (len(text) if isinstance(text, str) else 0) + 4 * self.dimension + 8 * len(p.sparse[0]) + 600

    def upsert(self, points: list[PointData]) -> None:
        if not points:
            return
        self._ensure_space(sum(self._point_bytes(p) for p in points))
        # Building a Point converts its payload under the GIL and the engine applies the slice
        # holding it too (the largest cost of the lexical pass left in the server's process):
        # slices of _SLICE points, and between them a request being answered goes first.
        for i in range(0, len(points), _SLICE):
            batch = []
            for p in points[i : i + _SLICE]:
                vec: dict[str, object] = {LEXICAL: qe.SparseVector(p.sparse[0], p.sparse[1])}
                if p.dense is not None:
                    vec[DENSE] = p.dense.tolist()
                batch.append(qe.Point(uuid.UUID(p.id), vec, p.payload))  # type: ignore[arg-type]
            with self._write:
                self._shard.update(qe.UpdateOperation.upsert_points(batch))
            FOREGROUND.yield_to_requests()

    def set_dense(self, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        self._ensure_space(len(vectors) * (4 * self.dimension + 200))
        pv = [qe.PointVectors(uuid.UUID(i), {DENSE: v.tolist()}) for i, v in vectors.items()]
        for i in range(0, len(pv), 128):
            with self._write:
                self._shard.update(qe.UpdateOperation.update_vectors(pv[i : i + 128]))
            FOREGROUND.yield_to_requests()

    def delete(self, ids: list[str]) -> None:
        if not ids:
            return
        self._ensure_space(len(ids) * 64)
        for i in range(0, len(ids), 1024):
            with self._write:
                self._shard.update(qe.UpdateOperation.delete_points([uuid.UUID(x) for x in ids[i : i + 1024]]))
                self._deleted += len(ids[i : i + 1024])
            FOREGROUND.yield_to_requests()

    def vacuum(self) -> bool:
        """Reload the shard if enough points were deleted since it was loaded that they could
        skew BM25's IDF (see _VACUUM_MIN); True if it did. Called by the indexer between
        batches; searches wait for the reload instead of failing."""
        if self._deleted < _VACUUM_MIN or self._deleted < _VACUUM_SHARE * self.count():
            return False
        with self._gate:
            if self._closed:
                return False
            self._reloading = True  # new searches wait; those in flight finish first
            self._gate.wait_for(lambda: self._readers == 0, timeout=10)
        try:
            with self._write:
                self._shard.flush()
                self._shard.close()
                try:
                    self._shard = qe.EdgeShard.load(self.location, self._load_config)
                except Exception as exc:
                    self._closed = True
                    raise StoreCorrupt(f"cannot load the index at {self.location} again: {exc}") from exc
                self._deleted = 0
                memory.unmap_file_pages(self.location)  # what the load read (release_pages)
        finally:
            with self._gate:
                self._reloading = False
                self._gate.notify_all()
        return True

    def _filter(self, req: SearchRequest) -> qe.Filter | None:
        must: list[object] = []
        if req.paths is not None:
            must.append(qe.FieldCondition("path", match=qe.MatchAny(req.paths or ["\0none"])))
        if req.languages is not None:
            must.append(qe.FieldCondition("language", match=qe.MatchAny(req.languages or ["\0none"])))
        return qe.Filter(must=must) if must else None  # type: ignore[arg-type]

    def _enter(self) -> None:
        with self._gate:
            self._gate.wait_for(lambda: not self._reloading, timeout=30)
            if self._closed:
                raise StoreError("the index is closed (restarting after a settings change); try again")
            self._readers += 1

    def _leave(self) -> None:
        with self._gate:
            self._readers -= 1
            self._gate.notify_all()

    def search(self, req: SearchRequest) -> list[StoredHit]:
        self._enter()
        try:
            return self._search(req)
        finally:
            self._leave()

    def _search(self, req: SearchRequest) -> list[StoredHit]:
        flt = self._filter(req)
        prefetch: list[qe.Prefetch] = []
        weights: list[float] = []
        if req.dense is not None:
            prefetch.append(
                qe.Prefetch(limit=req.candidates, filter=flt, query=qe.Query.Nearest(req.dense.tolist(), using=DENSE))
            )
            weights.append(req.weights[0])
        if req.sparse[0]:
            sv = qe.SparseVector(req.sparse[0], req.sparse[1])
            prefetch.append(qe.Prefetch(limit=req.candidates, filter=flt, query=qe.Query.Nearest(sv, using=LEXICAL)))
            weights.append(req.weights[1])
        if req.symbol_names and prefetch:
            sym = qe.FieldCondition("symbol_names", match=qe.MatchAny(req.symbol_names))
            must = [sym] + (list(flt.must or []) if flt else [])
            inner = prefetch[-1].query  # rank named definitions by the same lexical/dense query
            prefetch.append(qe.Prefetch(limit=10, filter=qe.Filter(must=must), query=inner))  # type: ignore[arg-type]
            weights.append(req.weights[2])
        if not prefetch:
            return []
        fusion = qe.Fusion.Dbsf() if req.fusion == "dbsf" else qe.Fusion.Rrf(k=req.rrf_k, weights=weights)
        # Fused scores tie often (RRF: ranks (i, j) and (j, i) sum alike) and the engine
        # returns ties in no fixed order; a sort on (score, id) over a few extra points makes
        # the ranking reproducible (unless more than 8 points tie at the cut-off).
        points = self._shard.query(
            qe.QueryRequest(limit=req.limit + 8, prefetches=prefetch, query=fusion, with_payload=True, filter=flt)
        )
        hits = [StoredHit(str(p.id), float(p.score), dict(p.payload or {})) for p in points]
        hits.sort(key=lambda h: (-round(h.score, 9), h.id))
        return hits[: req.limit]

    def retrieve(self, ids: list[str]) -> list[StoredHit]:
        self._enter()
        try:
            return self._retrieve(ids)
        finally:
            self._leave()

    def _retrieve(self, ids: list[str]) -> list[StoredHit]:
        out: list[StoredHit] = []
        for i in range(0, len(ids), 1024):
            recs = self._shard.retrieve([uuid.UUID(x) for x in ids[i : i + 1024]], with_payload=True, with_vector=False)
            out.extend(StoredHit(str(r.id), 0.0, dict(r.payload or {})) for r in recs)
        return out

    def by_symbol(self, names: list[str], limit: int) -> list[StoredHit]:
        flt = qe.Filter(must=[qe.FieldCondition("symbol_names", match=qe.MatchAny(names))])  # type: ignore[list-item]
        self._enter()
        try:
            recs, _ = self._shard.scroll(
                qe.ScrollRequest(limit=limit, filter=flt, with_payload=True, with_vector=False)
            )
        finally:
            self._leave()
        return [StoredHit(str(r.id), 0.0, dict(r.payload or {})) for r in recs]

    def all_ids(self) -> dict[str, tuple[str, bool]]:
        # A reader like a search: a scroll of the shard that vacuum() is reloading fails with
        # "Shard is not initialized" (a query thread reads every id: index/source_lexicon.py).
        self._enter()
        try:
            return self._all_ids()
        finally:
            self._leave()

    def _all_ids(self) -> dict[str, tuple[str, bool]]:
        out: dict[str, tuple[str, bool]] = {}
        offset = None
        while True:
            recs, offset = self._shard.scroll(
                qe.ScrollRequest(offset=offset, limit=2048, with_payload=["path"], with_vector=[DENSE])
            )
            for r in recs:
                vec = r.vector
                has_dense = isinstance(vec, dict) and DENSE in vec
                out[str(r.id)] = (str((r.payload or {}).get("path", "")), has_dense)
            if offset is None:
                break
        return out

    def count(self) -> int:
        self._enter()
        try:
            return int(self._shard.count(qe.CountRequest(exact=True)))
        finally:
            self._leave()

    def flush(self) -> None:
        with self._write:
            self._shard.flush()

    def release_pages(self, force: bool = False) -> None:
        """The shard's pages this process has mapped go back to the page cache
        (memory.unmap_file_pages); rate-limited unless `force`. Under the write lock: no
        update, flush, reload or close can remap the shard meanwhile."""
        now = time.monotonic()
        if not force and now - self._released_at < _RELEASE_EVERY_S:
            return
        self._released_at = now
        with self._write:
            if not self._closed:
                memory.unmap_file_pages(self.location)

    def close(self) -> None:
        with self._gate:
            if self._closed:
                return
            self._closed = True  # no new searches; wait for those in flight (they are short)
            self._gate.wait_for(lambda: self._readers == 0, timeout=10)
        with self._write:
            try:
                self._shard.flush()
            finally:
                self._shard.close()
