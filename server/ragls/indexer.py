"""The indexer: files -> chunks -> lexical points now, dense vectors in the background.

One worker thread owns every write, so the store and manifest never see two writers. Jobs
(scans, file changes, open buffers) are drained and coalesced before each step: a burst of
5,000 changes is one batch. Between jobs the worker backfills dense vectors, open files
first, then the most recently modified.
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import queue
import shutil
import sqlite3
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls import memory, name_rerank
from ragls.chunking.model import EMBED_FORMAT, embedding_text, name_text
from ragls.config import Settings, cache_root
from ragls.embedding import Embedder, EmbeddingError, local_identity, make_embedder
from ragls.embedding.cache import EmbeddingCache
from ragls.embedding.snapshot import Identity
from ragls.embedding.snapshot_source import ImportReport, import_snapshot
from ragls.faults import Backoff, CircuitBreaker, Fault
from ragls.git_history import HistoryTracker
from ragls.languages import language_of
from ragls.prepare import FileJob, Prepared, PreparePool, prepare_file
from ragls.protocol import CacheInfo, ErrorOut, IndexStatus, Progress, SnapshotInfo
from ragls.secrets import RULES_VERSION, is_secret_file
from ragls.seek import Seeker
from ragls.status import embedder_info, store_info
from ragls.store import PointData, Store, StoreCorrupt, StoreError, StoreFull, open_index, previous_manifest_bytes
from ragls.store.manifest import DELETING, DENSE, LEXICAL, FileRecord, Manifest, SkippedFile
from ragls.threads import in_thread, lower_priority
from ragls.workspace import CONTENT_CHECKS, Discovery, IgnoreRules, classify, discover, link_skip

if TYPE_CHECKING:
    from concurrent.futures import Future

    import numpy as np

log = logging.getLogger(__name__)

_LEXICAL_BATCH_FILES = 64
# A pass over at least this many files is prepared by worker processes, in tasks of
# _POOL_TASK_FILES files, with _POOL_DEPTH tasks per worker in flight; smaller ones (a save, an
# open buffer) in the indexer thread, where they start at once.
_POOL_MIN_FILES = 200
# A folder whose last manifest is at least this large (~1,200 files) is walked in a pool worker
# on open: in this process its discovery waits for the GIL the shard load holds, ~0.8 s at
# 150,000 chunks (docs/performance.md, "Sixth round"); a small folder walks in a few ms, which
# a worker's start-up would not pay for.
_DISCOVERY_IN_WORKER_BYTES = 1 << 20
# Skip reasons decided by a file's content: kept in the manifest with the file's size and mtime
# (a warm start would read every such file again otherwise: 69 of 13,275 at chunks150k).
# Not `too_large`: that depends on the `maxFileBytes` setting, not on the file alone. Kept
# skips are dropped when the content checks change (workspace.CONTENT_CHECKS).
_KEPT_SKIPS = frozenset({"binary", "generated", "minified", "secret_content"})
_SKIP_RULES = f"content checks {CONTENT_CHECKS}"
# The rules that decide what a prepared file holds beyond its bytes (secret redaction): an index
# prepared under other rules prepares every file again once (_open).
_PREPARE_RULES = f"secrets {RULES_VERSION}"
_POOL_TASK_FILES = 16
_POOL_DEPTH = 2
_POOL_MAX_WORKERS = 8
# Store flushes bound the write-ahead log a restart replays after a crash (a clean stop flushes).
# A Qdrant Edge flush syncs every file of the shard (~80 msync/fsync calls) holding the GIL, a
# stall of every request: 150-260 ms on the disk of the bench machine whatever the number of
# points written since (docs/performance.md, "Seventh round"). So the indexer flushes seldom
# while it works: after _FLUSH_POINTS points (a crash then replays at most that many: 2.6 s for
# 90,000 points) or _FLUSH_AGE_S after the last flush, and once the index is complete. 200,000:
# a 150,000-chunk lexical pass no longer stops for a flush midway (status max 317 -> 34 ms, peak
# RSS +20 MB, make bench chunks150k).
_FLUSH_POINTS = 200_000
_FLUSH_AGE_S = 600.0
# Objects left alive by this many points' batches are frozen out of the garbage collector's
# walks (_freeze_heap): a full collection of the unfrozen heap stalls every request.
_FREEZE_POINTS = 6_000
_SWITCH_INTERVAL_S = 0.001  # during the dense backfill
_DENSE_WINDOW = 512  # chunks the embedder groups by length together, to waste little padding
_MAX_ERRORS = 50


class ModelUnavailable(RuntimeError):
    """The bundled model did not load (a damaged install): lexical search goes on, the dense
    pass waits as a fault and tries again."""


class Phase(StrEnum):
    """The worker's state machine (docs/reliability.md, "The fault model"):

    starting -> discovering -> lexical -> dense -> idle, back to discovering on a scan and to
    lexical on a change; any step -> waiting (a fault: retried at its time, work kept queued);
    dense -> paused (the provider's breaker is open; lexical work goes on); error is only the
    index failing to open. The status reports the phase as is."""

    STARTING = "starting"
    DISCOVERING = "discovering"
    LEXICAL = "lexical"
    DENSE = "dense"
    IDLE = "idle"
    WAITING = "waiting"
    PAUSED = "paused"
    ERROR = "error"


@dataclass
class ErrorEntry:
    path: str
    message: str
    time: str


@dataclass
class _Jobs:
    scan: bool = False
    full: bool = False
    paths: set[str] = field(default_factory=set)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Records(dict[str, FileRecord]):
    """path -> FileRecord, keeping the counts the status reports as records come and go, so
    a status request costs O(1) instead of a walk over every record while the indexer
    competes for the GIL. Change a stored record's status or chunk ids only through
    `set_status` / `set_chunk_ids`."""

    def __init__(self, items: Iterable[tuple[str, FileRecord]] = ()) -> None:
        super().__init__(items)  # in bulk: a warm start loads every record of the manifest
        statuses = [r.status for r in self.values()]
        self.dense = statuses.count(DENSE)
        self.lexical = statuses.count(LEXICAL) + self.dense
        self.chunks = sum(len(r.chunk_ids) for r in self.values())

    def _count(self, rec: FileRecord, sign: int) -> None:
        if rec.status in (LEXICAL, DENSE):
            self.lexical += sign
            if rec.status == DENSE:
                self.dense += sign
        self.chunks += sign * len(rec.chunk_ids)

    def __setitem__(self, key: str, rec: FileRecord) -> None:
        old = super().get(key)
        if old is not None:
            self._count(old, -1)
        super().__setitem__(key, rec)
        self._count(rec, 1)

    def __delitem__(self, key: str) -> None:
        self._count(self[key], -1)
        super().__delitem__(key)

    def pop(self, key: str, *default: FileRecord | None) -> FileRecord | None:  # type: ignore[override]
        if key in self:
            rec = super().pop(key)
            self._count(rec, -1)
            return rec
        if default:
            return default[0]
        raise KeyError(key)

    def clear(self) -> None:
        super().clear()
        self.lexical = self.dense = self.chunks = 0

    def set_status(self, key: str, status: str) -> None:
        rec = self[key]
        self._count(rec, -1)
        rec.status = status
        self._count(rec, 1)

    def set_chunk_ids(self, key: str, ids: list[str]) -> None:
        rec = self[key]
        self._count(rec, -1)
        rec.chunk_ids = ids
        self._count(rec, 1)


class Indexer:
    def __init__(
        self,
        root: Path,
        settings: Settings,
        on_change: Callable[[], None] | None = None,
        embedder: Embedder | None = None,
        after: threading.Event | None = None,
        store_wait: float = 0.0,
        workers: int | None = None,
    ) -> None:
        self.root = root.resolve()
        self._store_wait = store_wait  # the folder's owner waits for the primary index slot
        self.settings = settings
        self.rules = IgnoreRules(self.root, settings)
        self._on_change = on_change or (lambda: None)
        self._embedder = embedder
        self._loading: Future[Embedder] | None = None  # the bundled model, loading (_open)
        self.model_error: str | None = None  # why the bundled model did not load
        self.store: Store | None = None
        self.manifest: Manifest | None = None
        self.cache: EmbeddingCache | None = None
        self.ready = threading.Event()  # set once the store is open (or failed); the model may still load
        self._jobs: queue.Queue[tuple[str, object]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # guards the in-memory state below
        self.records = Records()
        self.failed: dict[str, str] = {}
        self.skipped_other: Counter[str] = Counter()  # directories, links: counted, not per path
        self.skipped_paths: dict[str, str] = {}  # file -> why it is not indexed
        # Files skipped for their content, as the manifest keeps them (not read again unchanged).
        self.known_skips: dict[str, SkippedFile] = {}
        self.pending: set[str] = set()  # discovered, not yet processed
        self.missing_dense: dict[str, list[str]] = {}
        self.dense_failed: dict[str, list[str]] = {}  # gave up this pass; retried on the next scan
        self.open_docs: dict[str, str] = {}
        self.errors: deque[ErrorEntry] = deque(maxlen=_MAX_ERRORS)
        self.phase: Phase = Phase.STARTING
        self.fatal: str | None = None
        self.notice: str | None = None  # shown in the status, e.g. a fallback store in use
        self.last_indexed_at: str | None = None
        self.embeds = 0
        # `embedder.snapshot`: its import (a thread started by _open, awaited by the dense pass)
        # and how many of this index's chunks took their vector from it.
        self.snapshot_import: ImportReport | None = None
        self._stale_prepare: set[str] = set()  # files prepared under older rules (_PREPARE_RULES)
        self._snapshot_job: Future[ImportReport] | None = None
        self.snapshot_reused = 0
        self.embeds_names = 0  # name vectors cached (ragls.name_rerank)
        self.batches = 0  # lexical batches applied, for tests and benchmarks
        self.change_jobs = 0  # coalesced change sets handled (a burst of saves is one)
        self.runs = 0  # scans and change sets started: lets the progress reporter see short runs
        # The fault model (docs/reliability.md): a worker fault waits with bounded backoff; the
        # embedding provider has a circuit breaker so a dead one is probed, not hammered.
        self.fault: Fault | None = None
        self._fault_backoff = Backoff(1.0, 60.0)
        self.breaker = CircuitBreaker()
        self._dense_fail_at: dict[str, float] = {}  # file -> when its last dense batch failed
        # A restart (settings change) opens the same slot only after the previous indexer of
        # this folder closed it: `after` is that indexer's `closed`.
        self._after = after
        self.closed = threading.Event()
        self._index_dir: Path | None = None  # the embedded index's folder, watched for replacement
        self._index_ino: int | None = None
        # Lexical worker processes: one per core by default; fewer than 2 means none.
        workers = workers if workers is not None else min(os.cpu_count() or 1, _POOL_MAX_WORKERS)
        self._pool: PreparePool | None = PreparePool(workers, settings.indexing.nice) if workers > 1 else None
        self.pool_min_files = _POOL_MIN_FILES  # tests lower it to exercise the pool on small folders
        self.discovery_worker_bytes = _DISCOVERY_IN_WORKER_BYTES  # ...and this one
        self.worker_discoveries = 0  # first scans walked by a pool worker, for tests
        self._redone: set[str] | None = None  # indexed by a change while a pooled pass runs
        self._flushed_at = time.monotonic()
        self._unflushed = 0  # points written or changed since the last flush
        self._frozen_at = 0  # ..., of which this many when the heap was last frozen
        self._discovery: Future[Discovery] | None = None  # the first scan's, begun by _open
        # Files that spell a name a question asked for (seek.py), still waiting in a pass:
        # indexed at the next batch boundary instead of in pass order. (Opened and saved
        # files are changes, which a pass handles at its next boundary already.)
        self._urgent: dict[str, None] = {}
        self._identity: tuple[str, int] | None = None  # (model id, dimension) of the open index
        self.scans = 0
        self.seeker = Seeker(
            self.root,
            settings.max_file_bytes,
            self._waiting,
            self.prioritize,
            lambda: self.scans,
            settings.indexing.nice,
        )
        self.pooled_passes = 0  # lexical passes prepared by worker processes, for tests and benchmarks
        # The workspace's git history, read by the first query and again when HEAD moves.
        self.git_history = HistoryTracker(self.root, settings.retrieval.git_history_commits)

    # -- public, thread-safe -----------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """None until the bundled model has loaded (_open starts it)."""
        loading = self._loading
        if self._embedder is None and loading is not None and loading.done() and loading.exception() is None:
            self._embedder = loading.result()
        return self._embedder

    def start(self) -> None:
        # The indexer thread runs Python for seconds at a time; a request thread waiting for the
        # GIL gets it after at most one switch interval, and a request takes dozens of hand-offs.
        # 1 ms instead of the default 5 keeps requests short while indexing, at a small cost in
        # throughput (process-wide, set once).
        sys.setswitchinterval(min(sys.getswitchinterval(), _SWITCH_INTERVAL_S))
        self._thread = threading.Thread(target=self._run, name="ragls-indexer", daemon=True)
        self._thread.start()

    def request_scan(self, full: bool = False) -> None:
        self._jobs.put(("scan", full))

    def retry_now(self) -> None:
        """A user's reindex: waiting faults and a paused provider are tried again at once."""
        self.breaker.probe_now()
        with self._lock:
            if self.fault is not None:
                self.fault.retry_at = 0.0
                self.fault.need = 0
        self._jobs.put(("wake", None))

    def notify_changes(self, paths: set[str]) -> None:
        if paths:
            self._jobs.put(("paths", set(paths)))

    def open_document(self, rel: str, text: str) -> None:
        with self._lock:
            self.open_docs[rel] = text
        self._jobs.put(("paths", {rel}))

    def prioritize(self, paths: Iterable[str]) -> None:
        """Index these (if still waiting) at the next batch boundary of the running pass."""
        with self._lock:
            self._urgent.update(dict.fromkeys(paths))

    def seek(self, names: list[str]) -> None:
        """A question named these definitions: while files wait, send the ones that spell a
        name ahead (seek.py). Returns at once."""
        if names and self.pending:
            self.seeker.seek(names)

    def _waiting(self) -> list[str]:
        with self._lock:
            return [p for p in self.pending if p not in self._urgent]

    def close_document(self, rel: str) -> None:
        with self._lock:
            had = self.open_docs.pop(rel, None) is not None
        if had:
            self._jobs.put(("paths", {rel}))

    def stop(self, timeout: float = 1.5) -> bool:
        """Ask the worker to stop; it closes the store itself after its current batch (never
        under a write). Returns True when the store is closed within `timeout`."""
        self._stop.set()
        self._jobs.put(("stop", None))
        self.seeker.stop()
        if self._thread is None:
            self._close()
            self.closed.set()
            return True
        if not self.closed.wait(timeout):
            # Mid-batch at process exit: the store and manifest recover like after a kill -9.
            log.info("indexer still busy after %.1fs; it closes the index when its batch ends", timeout)
            return False
        return True

    def busy(self) -> bool:
        """Will the index change without outside help? (Not while a fault or an open breaker
        waits: `ragls index` reports those instead of waiting for them.)"""
        with self._lock:
            if self.fatal or self.fault is not None:
                return False
            if self.breaker.is_open and not self.pending and self._jobs.empty():
                return False
            return bool(
                self.pending or self.missing_dense or not self._jobs.empty() or self._model_loading()
            ) or self.phase in (
                "starting",
                "discovering",
            )

    def indexed_paths(self) -> list[str]:
        with self._lock:
            return list(self.records)

    def snapshot(self) -> IndexStatus:
        """The index's state and counters (see status.build_status for the whole status)."""
        with self._lock:
            recs = self.records
            lexical_done, chunks = recs.lexical, recs.chunks
            failed = len(self.failed)
            skipped = Counter(self.skipped_paths.values()) + self.skipped_other
            total = (
                len(recs)
                + sum(1 for p in self.failed if p not in recs)
                + sum(1 for p in self.pending if p not in recs and p not in self.failed)
            )
            # A file whose embedding failed stays searchable lexically but counts as failed.
            dense_done = recs.dense - sum(
                1 for p in self.failed if (r := recs.get(p)) is not None and r.status == DENSE
            )
            message = self.fatal or self.notice
            if message is None and self.model_error:
                message = f"the embedding model could not be loaded ({self.model_error}); search is lexical only"
            if self.fatal:
                state, phase = "error", "error"
            elif self.fault is not None:
                state, phase, message = "error", "waiting", self.fault.describe()
            elif self.breaker.is_open and not self.breaker.allow() and self.missing_dense and not self.pending:
                state, phase, message = "error", "paused", self.breaker.describe()
            elif (
                self.phase in ("starting", "discovering")
                or self.pending
                or self.missing_dense
                or not self._jobs.empty()
            ):
                state, phase = "indexing", self.phase
            elif self._model_loading():
                # Every file is searchable, lexically; the dense half waits for the model (a
                # moment after the index opens), so not `ready` yet (protocol.md).
                state, phase = "indexing", "dense"
            elif self.model_error:
                # Nothing left to embed, but no model for the questions either: lexical only,
                # like a provider that is down (with chunks to embed, the fault above says it).
                state, phase = "error", "paused"
            else:
                state, phase = "ready", "idle"
            hits, misses = (self.cache.hits, self.cache.misses) if self.cache else (0, 0)
            searchable = total - failed if total >= failed else total
            # Workspace, version, warnings and watcher health are added by status.build_status.
            return IndexStatus(
                state=state,  # type: ignore[arg-type]
                phase=phase,
                files_total=total,
                files_indexed=dense_done,
                files_failed=failed,
                files_skipped=sum(skipped.values()),
                skipped_by_reason=dict(skipped),
                chunks=chunks,
                lexical=Progress(done=lexical_done, total=searchable),
                dense=Progress(done=dense_done, total=searchable),
                last_indexed_at=self.last_indexed_at,
                embedder=embedder_info(self.settings, self.embedder),
                store=store_info(self.settings, self.store),
                cache=CacheInfo(
                    hits=hits, misses=misses, hit_rate=round(hits / (hits + misses), 4) if hits + misses else 0.0
                ),
                embedded=self.embeds,
                snapshot=self._snapshot_info(),
                errors=[ErrorOut(path=e.path, message=e.message, time=e.time) for e in self.errors],
                workspace=str(self.root),
                message=message,
            )

    def _snapshot_info(self) -> SnapshotInfo | None:
        r = self.snapshot_import
        if r is None:
            return None
        return SnapshotInfo(
            source=r.source,
            state=r.state,  # type: ignore[arg-type]
            vectors=r.vectors,
            reused=self.snapshot_reused,
            message=r.message,
        )

    # -- worker ------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            if self._after is not None and not self._after.wait(60):
                log.warning("the previous indexer of %s did not close its index within 60s", self.root)
            if self._open_with_retry():
                self._loop()
        finally:
            self._close()
            self.closed.set()

    def _open_with_retry(self) -> bool:
        delay = 1.0
        while True:
            try:
                self._open()
                break
            except StoreCorrupt as exc:
                # Never ask the user to wipe by hand: keep the broken copy aside, rebuild (the
                # embedding cache means nothing is embedded again).
                self._close()
                self._quarantine(str(exc))
            except (StoreError, EmbeddingError) as exc:
                # An unreachable server or provider may come back: say so in the status and retry.
                self._close()
                self.fatal = f"{exc} (retrying in {delay:.0f}s)"
                log.error("%s", self.fatal)
                self.ready.set()
                self._on_change()
                if self._stop.wait(delay):
                    return False
                delay = min(delay * 2, 60.0)
            except Exception as exc:  # any other failure to open must become a visible status, not a crash
                self.fatal = f"cannot start indexer: {exc}"
                log.error("%s", self.fatal)
                self.ready.set()
                self._on_change()
                return False
        self.fatal = None
        self.ready.set()
        return True

    def _has_work(self) -> bool:
        return bool(self.pending) or (bool(self.missing_dense) and self.breaker.allow())

    def _loop(self) -> None:
        """The worker: scans and changes first, then pending files, then dense backfill. Every
        step either completes, or leaves its work queued and sets a fault with a retry time;
        until then the worker sleeps (no step runs, so nothing spins)."""
        while not self._stop.is_set():
            if self.fault is not None and not self._fault_due():
                self._stop.wait(0.5)
                continue
            jobs = self._drain(block=not self._has_work())
            if self._stop.is_set():
                break
            try:
                if jobs.scan:
                    self._scan(full=jobs.full)
                if jobs.paths:
                    self._apply_changes(jobs.paths)
                if not jobs.scan and not jobs.paths:
                    if self.pending:
                        self._index_pending()
                    elif self.missing_dense and self.breaker.allow():
                        self._dense_step()
                if self.store is not None and self._jobs.empty() and not self._has_work():
                    # Caught up: let the points this batch deleted stop counting in BM25's IDF.
                    if self.store.vacuum():
                        log.info("reloaded the index so deleted chunks stop counting in lexical scores")
                if self.fault is not None:
                    log.info("recovered: %s", self.fault.message)
                    with self._lock:
                        self.fault = None
                    self._fault_backoff.reset()
            except _IndexReplaced:
                self._reopen_replaced_index(jobs)
            except Exception as exc:  # every failure becomes a fault with a retry time
                if self._index_dir is not None and _inode(self._index_dir) != self._index_ino:
                    self._reopen_replaced_index(jobs)  # the write failed because the folder went away
                else:
                    self._set_fault(exc, jobs)
            self._on_change()

    def _quarantine(self, why: str) -> None:
        assert self._identity is not None
        from ragls.store import index_dir

        d = index_dir(self.root, self.settings, *self._identity)
        aside = d.with_name(f"{d.name}.broken-{int(time.time())}")
        log.error("%s; moved it to %s and rebuilding", why, aside)
        self._error("", f"{why}; moved aside to {aside.name}, rebuilding the index")
        try:
            d.rename(aside)
        except OSError as exc:
            raise StoreError(f"{why}; and cannot move it aside: {exc}") from exc

    def _check_index_dir(self) -> None:
        """Before every write batch: is the index folder still the one we opened?"""
        if self._index_dir is not None and _inode(self._index_dir) != self._index_ino:
            raise _IndexReplaced

    def _reopen_replaced_index(self, jobs: _Jobs) -> None:
        """The index folder was removed or replaced under us (a cleanup script, a restored
        backup): reopen at that path and rebuild from the files, never write into a ghost."""
        msg = f"the index folder {self._index_dir} was removed or replaced; rebuilding the index"
        log.warning("%s", msg)
        self._error("", msg)
        self._close()
        with self._lock:
            self.records = Records()
            self.missing_dense.clear()
            self.dense_failed.clear()
            self.failed.clear()
            self.pending.clear()
            self._dense_fail_at.clear()
        self._index_dir = None
        self.phase = Phase.STARTING  # "indexing" until the rescan below has rebuilt the records
        if jobs.paths:
            self._jobs.put(("paths", jobs.paths))
        try:
            self._open()  # queues a full scan
        except Exception as exc:
            self._close()
            self._set_fault(exc if isinstance(exc, StoreError) else StoreError(str(exc)), _Jobs())

    def _fault_due(self) -> bool:
        assert self.fault is not None
        if time.monotonic() < self.fault.retry_at:
            return False
        if self.fault.kind == "disk" and self.fault.need and self.fault.where:
            # Cheap check first: no work is redone until the space is there.
            try:
                free = shutil.disk_usage(self.fault.where).free
            except OSError:
                free = 0
            if free < self.fault.need:
                self.fault.retry_at = time.monotonic() + 5.0
                return False
        return True

    def _set_fault(self, exc: Exception, jobs: _Jobs) -> None:
        # The step's work stays queued: pending files stay pending, a scan or change set is put back.
        if jobs.scan and self.phase == Phase.DISCOVERING:
            self._jobs.put(("scan", jobs.full))
        elif jobs.paths:
            self._jobs.put(("paths", jobs.paths))
        need, where = 0, ""
        if isinstance(exc, StoreFull) or _is_disk_full(exc):
            kind, delay = "disk", 5.0
            need, where = getattr(exc, "need", 0), getattr(exc, "where", "")
            message = str(exc) if isinstance(exc, StoreFull) else f"no space left for the index: {exc}"
        elif isinstance(exc, StoreError):
            kind, delay, message = "store", self._fault_backoff.next_delay(), f"store error: {exc}"
        elif isinstance(exc, sqlite3.Error):
            kind, delay, message = "manifest", self._fault_backoff.next_delay(), f"manifest error: {exc}"
        elif isinstance(exc, ModelUnavailable):
            kind, delay, message = "model", self._fault_backoff.next_delay(), f"cannot load the embedding model: {exc}"
        else:
            log.exception("indexer step failed")
            kind, delay, message = "internal", self._fault_backoff.next_delay(), f"internal error: {exc!r}"
        same = self.fault is not None and self.fault.message == message
        with self._lock:
            self.fault = Fault(kind, message, time.monotonic() + delay, need, where)
        if not same:  # one error entry per distinct fault, not one per retry
            self._error("", f"{message} (retrying in {delay:.0f}s)")

    def _index_pending(self) -> None:
        """Files discovered but not yet indexed (after a scan, or left by a failed batch)."""
        with self._lock:
            first = set(self.open_docs) | self._urgent.keys()
            todo = sorted(self.pending, key=lambda r: (r not in first, r))
        self.phase = Phase.LEXICAL
        if not self._index_many(todo, handle_jobs=False):
            return  # changes and scans go first; the rest stays pending
        self.phase = Phase.DENSE if self.missing_dense else Phase.IDLE
        self.last_indexed_at = _now()

    def _index_many(self, todo: list[str], handle_jobs: bool) -> bool:
        """The lexical pass over `todo`, in order. Between batches, queued changes are handled
        at once (`handle_jobs`, a scan) or end the pass (the rest stays pending). False when
        the pass ended early."""
        if self._pool is None or len(todo) < self.pool_min_files:
            if self._pool is not None:
                self._pool.close()  # started for the discovery only: an idle server keeps no workers
            for i in range(0, len(todo), _LEXICAL_BATCH_FILES):
                if self._stop.is_set() or (not handle_jobs and not self._jobs.empty()):
                    return False
                self._index_files(todo[i : i + _LEXICAL_BATCH_FILES])
                if not self._between_batches(handle_jobs):
                    return False
            return True
        try:
            return self._index_pooled(todo, handle_jobs)
        finally:
            if self._pool is not None:  # None: a worker died, the pass went on in this thread
                self._pool.close()  # an idle server keeps no worker processes
            self._maybe_flush()

    def _index_pooled(self, todo: list[str], handle_jobs: bool) -> bool:
        """Worker processes parse, chunk and tokenize; this thread plans each task (the checks
        that need the index's state) and stores the results in order, a few tasks ahead."""
        from concurrent.futures.process import BrokenProcessPool

        assert self._pool is not None
        s = self.settings
        root = str(self.root)
        self._redone = set()
        self.pooled_passes += 1
        tasks = (todo[i : i + _POOL_TASK_FILES] for i in range(0, len(todo), _POOL_TASK_FILES))
        inflight: deque[tuple[list[FileJob], Future[list[Prepared]]]] = deque()
        depth = _POOL_DEPTH * self._pool.workers
        try:
            while True:
                while len(inflight) < depth and (task := next(tasks, None)) is not None:
                    if jobs := self._plan(task):
                        inflight.append((jobs, self._pool.submit(root, jobs, s.indexing, s.max_file_bytes)))
                if not inflight:
                    return True
                jobs, fut = inflight.popleft()
                try:
                    results = fut.result()
                except BrokenProcessPool:
                    # A worker died (a crashing grammar, the OOM killer): finish in this thread.
                    log.warning("a lexical worker process died; indexing on in this process")
                    self._pool.close()
                    self._pool = None
                    rest = [j.rel for j in jobs] + [j.rel for js, _ in inflight for j in js]
                    rest += [r for t in tasks for r in t]
                    inflight.clear()
                    return self._index_many(rest, handle_jobs)
                redone = self._redone or set()
                self._apply([(j, p) for j, p in zip(jobs, results, strict=True) if p.rel not in redone])
                if not self._between_batches(handle_jobs):
                    return False
        finally:
            for _, fut in inflight:
                fut.cancel()
            self._redone = None

    def _between_batches(self, handle_jobs: bool) -> bool:
        self._on_change()
        memory.trim()  # the batch's results and payloads are freed: give the pages back
        if self._stop.is_set():
            return False
        self._index_urgent()
        if not self._jobs.empty():
            if not handle_jobs:
                return False
            # A change arrived mid-scan (a save, an opened file): handle it now, continue after.
            jobs = self._drain(block=False)
            if jobs.scan:
                self._jobs.put(("scan", jobs.full))
            if jobs.paths:
                self._apply_changes(jobs.paths)
        return True

    def _index_urgent(self) -> None:
        """Asked-for files still waiting: a batch of them now, in this thread (the running pass
        drops its own results for them, like for a change)."""
        with self._lock:
            if not self._urgent:
                return
            ready = [p for p in self._urgent if p in self.pending]
            todo = ready[:_LEXICAL_BATCH_FILES]
            self._urgent = dict.fromkeys(ready[_LEXICAL_BATCH_FILES:])
        if todo:
            if self._redone is not None:
                self._redone.update(todo)
            self._index_files(todo)

    def _open(self) -> None:
        nice = self.settings.indexing.nice
        lower_priority(nice)
        # A warm start is mostly the shard load, which holds the GIL (~0.8 s at 150,000 chunks):
        # the first scan's discovery walks the tree meanwhile, in a worker process when the
        # folder is large (in a thread it would wait for the GIL), and the bundled model loads
        # once the index is open (docs/performance.md, "Sixth round").
        self.rules.invalidate()
        if self._pool is not None and previous_manifest_bytes(self.root, self.settings) >= self.discovery_worker_bytes:
            self._discovery = self._pool.discover(self.root, self.settings)
            self.worker_discoveries += 1
        else:
            self._discovery = in_thread(nice, discover, self.root, self.settings, self.rules)
        identity = local_identity(self.settings.embedder) if self._embedder is None else None
        if identity is not None:
            model_id, dimension = identity
        else:
            if self._embedder is None:
                self._embedder = make_embedder(self.settings.embedder)
            model_id, dimension = self._embedder.model_id, self._embedder.dimension
        self._identity = (model_id, dimension)  # the index's key, for _quarantine
        self.store, manifest_path, self.notice = open_index(
            self.root, self.settings, model_id, dimension, self._store_wait
        )
        self._index_dir = manifest_path.parent if self.store.kind == "edge" else None
        self._index_ino = _inode(self._index_dir) if self._index_dir else None
        if self.notice:
            log.warning("%s", self.notice)
        self.manifest = Manifest(manifest_path)
        self.known_skips = self.manifest.skipped(_SKIP_RULES)
        if self.manifest.get_meta("prepare_rules") != _PREPARE_RULES:
            # Made under other redaction rules: every file is prepared again (unchanged text
            # keeps its vector through the embedding cache); the mark is written once none is left.
            self._stale_prepare = set(self.manifest.all())
            if not self._stale_prepare:
                self.manifest.set_meta("prepare_rules", _PREPARE_RULES)
        self.cache = EmbeddingCache(cache_root(self.settings) / "embeddings.sqlite", model_id, dimension)
        if source := self.settings.embedder.snapshot:
            self.snapshot_import = ImportReport(source)
            self._snapshot_job = in_thread(
                nice,
                import_snapshot,
                source,
                self.cache,
                Identity(model_id, dimension, EMBED_FORMAT),
                cache_root(self.settings),
                name_rerank.NAME_KEY,
                self.snapshot_import,
            )
        records = Records(self.manifest.all().items())
        with self._lock:
            self.records = records
        self._reconcile()
        if identity is not None:
            # The bundled model loads now, not beside the shard: it needs the GIL for much of
            # its load, which the shard load holds, and nothing before the dense pass needs it
            # (queries are answered lexically meanwhile, answer.py says so in its warnings).
            self._loading = in_thread(nice, make_embedder, self.settings.embedder)
            self._loading.add_done_callback(self._model_loaded)
        _freeze_heap()
        self._jobs.put(("scan", False))

    def _model_loading(self) -> bool:
        return self._loading is not None and not self._loading.done()

    def _model_loaded(self, loading: Future[Embedder]) -> None:
        exc = loading.exception()
        if exc is not None:  # lexical search goes on; the dense pass raises it again (a fault, retried)
            self.model_error = str(exc)
            self._error("", f"cannot load the embedding model: {exc}")
        self._on_change()  # `ready` (or the error) now: clients hear it at once, not at the next poll

    def _cached_vectors(self, hashes: list[str]) -> dict[str, np.ndarray]:
        """The cached vectors of these chunk texts. Where the dense pass caches name vectors, a
        vector cached without one (before name vectors existed) counts as missing, so it is
        embedded again with its name vector: queries never embed name vectors themselves."""
        assert self.cache is not None
        cached = self.cache.get_many(hashes)
        if cached and self._wants_names():
            named = self.cache.get_many([name_rerank.NAME_KEY + h for h in cached], count=False)
            cached = {h: v for h, v in cached.items() if name_rerank.NAME_KEY + h in named}
        if cached and self.snapshot_import is not None and self.snapshot_import.hashes:
            taken = self.snapshot_import.hashes
            self.snapshot_reused += sum(1 for h in hashes if h in cached and h in taken)
        return cached

    def _wants_names(self) -> bool:
        """Whether the dense pass caches name vectors (name_rerank.usable), known without
        loading the model: the bundled model always gives them."""
        if self._embedder is not None:
            return name_rerank.usable(self._embedder, self.cache)
        return self.settings.embedder.provider == "local"

    def _model(self) -> Embedder:
        """The embedder for the dense pass: waits for the bundled model if it is still loading;
        after a failed load (raised here, a fault with a retry) the next call loads it again."""
        emb = self.embedder
        if emb is None:
            loading, self._loading = self._loading, None
            try:
                emb = loading.result() if loading is not None else make_embedder(self.settings.embedder)
            except EmbeddingError:
                raise
            except Exception as exc:
                self.model_error = str(exc)
                raise ModelUnavailable(str(exc)) from exc
            self._embedder, self.model_error = emb, None
        return emb

    def _close(self) -> None:
        for closer in (self.store, self.manifest, self.cache):
            if closer is not None:
                try:
                    closer.close()
                except Exception:  # closing twice or after a failure is harmless
                    pass
        self.store = self.manifest = self.cache = None  # type: ignore[assignment]
        if self._pool is not None:
            self._pool.close()

    def _drain(self, block: bool) -> _Jobs:
        jobs = _Jobs()
        try:
            item = self._jobs.get(timeout=0.5) if block else self._jobs.get_nowait()
        except queue.Empty:
            return jobs
        while True:
            kind, arg = item
            if kind == "scan":
                jobs.scan = True
                jobs.full = jobs.full or bool(arg)
            elif kind == "paths":
                jobs.paths |= arg  # type: ignore[arg-type]
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                break
        if jobs.scan:
            jobs.paths.clear()  # a scan covers every path
        return jobs

    def _error(self, path: str, message: str) -> None:
        log.warning("%s%s", f"{path}: " if path else "", message)
        with self._lock:
            self.errors.append(ErrorEntry(path, message, _now()))

    # -- consistency -------------------------------------------------------------------------
    def _reconcile(self) -> None:
        """Make the manifest and the store agree after any crash: delete orphan points,
        re-queue files whose points are missing, and find chunks still lacking dense vectors."""
        assert self.store is not None and self.manifest is not None
        recs = self.records
        if all(not r.pending_ids and r.status in (LEXICAL, DENSE) for r in recs.values()) and (
            self.store.count() == recs.chunks
        ):
            # A clean stop (no write-ahead left, as many points as the manifest names): skip the
            # scroll over every point, seconds at 100k. Chunks of lexical files are queued
            # whole; those embedded before the stop come back from the embedding cache.
            with self._lock:
                for path, rec in recs.items():
                    if rec.status == LEXICAL and rec.chunk_ids:
                        self.missing_dense[path] = list(rec.chunk_ids)
            return
        stored = self.store.all_ids()
        known: set[str] = set()
        broken: list[str] = []
        for path, rec in list(self.records.items()):
            ids = set(rec.chunk_ids)
            known |= ids
            if rec.pending_ids or rec.status not in (LEXICAL, DENSE) or not ids <= stored.keys():
                # Interrupted mid-write: forget the version so the scan rewrites it.
                known |= set(rec.pending_ids)
                broken.append(path)
                continue
            missing = [i for i in rec.chunk_ids if not stored[i][1]]
            if missing:
                with self._lock:
                    self.missing_dense[path] = missing
                    if rec.status == DENSE:
                        self.records.set_status(path, LEXICAL)
        orphans = [i for i in stored if i not in known]
        for path in broken:
            with self._lock:
                rec = self.records.pop(path)
            orphans.extend(i for i in rec.chunk_ids + rec.pending_ids if i in stored)
        if orphans:
            log.info("removing %d orphan chunks left by an interrupted run", len(orphans))
            self.store.delete(sorted(set(orphans)))
        if broken:
            self.manifest.remove(broken)
        lexical_only = [p for p in self.missing_dense if self.records[p].status == LEXICAL]
        self.manifest.set_status(lexical_only, LEXICAL)

    # -- scanning ----------------------------------------------------------------------------
    def _scan(self, full: bool) -> None:
        assert self.store is not None and self.manifest is not None
        self.phase = Phase.DISCOVERING
        self.runs += 1
        self.scans += 1
        self._on_change()
        if full:
            self._remove(list(self.records))
        early, self._discovery = self._discovery, None
        if early is not None and not full:
            found = self._early_discovery(early)  # started when the index opened, moments ago
        else:
            self.rules.invalidate()
            found = discover(self.root, self.settings, self.rules)
        current = {f.rel: f for f in found.files}
        with self._lock:
            self.skipped_paths = dict(found.skipped_files)
            self.skipped_other = found.skipped - Counter(found.skipped_files.values())
            self.failed.clear()
            # Files whose embedding gave up last time get another try.
            for p, ids in self.dense_failed.items():
                self.missing_dense.setdefault(p, []).extend(i for i in ids if i not in self.missing_dense[p])
            self.dense_failed.clear()
        removed = [p for p in self.records if p not in current]
        self._remove(removed)
        todo: list[str] = []
        unchanged_skips: dict[str, str] = {}
        for rel, f in current.items():
            rec = self.records.get(rel)
            known = self.known_skips.get(rel) if rec is None and rel not in self.open_docs else None
            if known is not None and known.size == f.size and known.mtime_ns == f.mtime_ns:
                unchanged_skips[rel] = known.reason  # skipped last time, unchanged since
            elif (
                rel in self.open_docs
                or rec is None
                or rec.size != f.size
                or rec.mtime_ns != f.mtime_ns
                or rel in self._stale_prepare
            ):
                todo.append(rel)
        self._forget_skips([p for p in self.known_skips if p not in current])  # gone, or ignored now
        with self._lock:
            self.skipped_paths.update(unchanged_skips)
        # Open files first, then the most recently modified: what the user asks about next.
        todo.sort(key=lambda r: (r not in self.open_docs, -current[r].mtime_ns))
        with self._lock:
            self.pending = set(todo)
        self.phase = Phase.LEXICAL
        log.info(
            "scan: %d files, %d to (re)index, %d removed, %d skipped",
            len(current),
            len(todo),
            len(removed),
            sum(found.skipped.values()),
        )
        if not self._index_many(todo, handle_jobs=True):
            return
        self.phase = Phase.DENSE if self.missing_dense else Phase.IDLE
        self.last_indexed_at = _now()

    def _early_discovery(self, early: Future[Discovery]) -> Discovery:
        from concurrent.futures import CancelledError
        from concurrent.futures.process import BrokenProcessPool

        try:
            return early.result()
        except (BrokenProcessPool, CancelledError):  # the worker died (out of memory?): walk here instead
            log.warning("the discovery worker stopped; walking the folder in the indexer thread")
            if self._pool is not None:
                self._pool.close()
            self.rules.invalidate()
            return discover(self.root, self.settings, self.rules)

    def _apply_changes(self, paths: set[str]) -> None:
        self.change_jobs += 1
        self.runs += 1
        if any(p.rsplit("/", 1)[-1] in (".gitignore", ".ragignore") for p in paths) or any(
            (self.root / p).is_dir() for p in paths
        ):
            # Ignore rules changed, or a whole directory moved in (inotify reports only the
            # directory): rescan; unchanged files cost a stat each.
            self._jobs.put(("scan", False))
            return
        todo: list[str] = []
        gone: list[str] = []
        for rel in sorted(paths):
            full = self.root / rel
            if rel in self.open_docs:
                todo.append(rel)
            elif full.is_file():
                todo.append(rel)
            else:
                # A deleted directory arrives as one path: drop everything under it.
                prefix = rel.rstrip("/") + "/"
                gone.append(rel)
                gone.extend(p for p in self.records if p.startswith(prefix))
        self._remove([p for p in gone if p in self.records])
        if self._redone is not None:  # a pooled pass in flight must not overwrite these
            self._redone.update(todo, gone)
        with self._lock:
            for p in gone:
                self.failed.pop(p, None)
                self.skipped_paths.pop(p, None)
        if todo:
            with self._lock:
                self.pending |= set(todo)
            prev_phase = self.phase
            self.phase = Phase.LEXICAL
            for i in range(0, len(todo), _LEXICAL_BATCH_FILES):
                self._index_files(todo[i : i + _LEXICAL_BATCH_FILES])
            self.phase = (
                Phase.DENSE if self.missing_dense else (Phase.IDLE if prev_phase != Phase.DISCOVERING else prev_phase)
            )
        self.last_indexed_at = _now()

    def _remove(self, paths: list[str]) -> None:
        if not paths:
            return
        assert self.store is not None and self.manifest is not None
        ids = [i for p in paths if p in self.records for i in self.records[p].chunk_ids]
        # Write-ahead again: a crash between the two steps leaves "deleting" records, which
        # the next start finishes, instead of records pointing at missing chunks.
        self.manifest.set_status(paths, DELETING)
        self.store.delete(ids)
        self.manifest.remove(paths)
        with self._lock:
            for p in paths:
                self.records.pop(p, None)
                self.missing_dense.pop(p, None)
                self.dense_failed.pop(p, None)

    def _forget_skips(self, paths: list[str]) -> None:
        gone = [p for p in paths if p in self.known_skips]
        if gone:
            assert self.manifest is not None
            self.manifest.forget_skipped(gone)
            for p in gone:
                del self.known_skips[p]

    def _skip(self, rel: str, reason: str) -> None:
        if reason not in _KEPT_SKIPS:
            self._forget_skips([rel])
        with self._lock:
            if reason == "vanished":
                self.skipped_paths.pop(rel, None)  # gone is not skipped: it no longer exists
            else:
                self.skipped_paths[rel] = reason
            self.pending.discard(rel)
            self.failed.pop(rel, None)
        if rel in self.records:
            self._remove([rel])

    def _indexable_buffer(self, rel: str) -> bool:
        """An open editor buffer follows the same rules as the file on disk would."""
        return not (
            is_secret_file(rel)
            or self.rules.ignored_with_parents(rel)
            or not self.rules.included(rel)
            or language_of(rel) is None
        )

    def _plan(self, rels: list[str]) -> list[FileJob]:
        """The checks that need the index's state, in the indexer thread, before a file's
        content is prepared (here or in a worker process)."""
        jobs: list[FileJob] = []
        real_dirs: dict[str, str] = {}
        for rel in rels:
            # A link created after discovery (e.g. by a checkout) must not reach outside the root.
            if link := link_skip(str(self.root), rel, self.rules, real_dirs):
                self._skip(rel, link)
                continue
            with self._lock:
                buffer = self.open_docs.get(rel)
            if buffer is not None and not self._indexable_buffer(rel):
                with self._lock:
                    self.pending.discard(rel)
                continue
            if buffer is None:
                try:
                    st = (self.root / rel).stat()
                except OSError:
                    self._skip(rel, "vanished")
                    continue
                reason = (
                    classify(rel, self.rules, self.settings, st)
                    if not self.rules.ignored_with_parents(rel)
                    else "ignored"
                )
                if reason:
                    self._skip(rel, reason)
                    continue
            language = language_of(rel)
            if language is None:
                self._skip(rel, "unsupported")
                continue
            old = self.records.get(rel)
            complete = self._complete(rel, old, buffer) and rel not in self._stale_prepare
            jobs.append(FileJob(rel, language, buffer, old.hash if complete and old else None))
        return jobs

    def _complete(self, rel: str, old: FileRecord | None, buffer: str | None) -> bool:
        """Is the stored version of `rel` whole (so equal content needs no work)?"""
        return (
            old is not None
            and buffer is None
            and not old.pending_ids
            and rel not in self.missing_dense
            and old.status == DENSE
        )

    def _index_files(self, rels: list[str]) -> None:
        """Lexical phase for a batch of files, prepared in this thread."""
        s = self.settings
        self._apply([(j, prepare_file(str(self.root), j, s.indexing, s.max_file_bytes)) for j in self._plan(rels)])

    def _apply(self, done: list[tuple[FileJob, Prepared]]) -> None:
        """Store prepared files: sparse vectors (and cached dense vectors) now, the rest queued
        for dense backfill. Every store and manifest write of the lexical pass happens here."""
        assert self.store is not None and self.manifest is not None and self.cache is not None
        self._check_index_dir()
        new_points: list[PointData] = []
        plans: list[tuple[FileRecord, list[str], list[str]]] = []  # record, stale ids, no-dense ids
        touched: list[FileRecord] = []
        skips: dict[str, SkippedFile] = {}
        for job, p in done:
            rel = p.rel
            if p.skip:
                self._skip(rel, p.skip)
                if p.skip in _KEPT_SKIPS and job.buffer is None and p.mtime_ns:
                    skips[rel] = SkippedFile(p.size, p.mtime_ns, p.skip)
                continue
            old = self.records.get(rel)
            if p.unchanged:
                with self._lock:
                    buffer = self.open_docs.get(rel)
                if old is not None and old.hash == p.digest and self._complete(rel, old, buffer):
                    old.size, old.mtime_ns = p.size, p.mtime_ns  # touched, not changed
                    touched.append(old)
                    with self._lock:
                        self.pending.discard(rel)
                continue  # else: changed meanwhile; it stays pending and is read again
            if p.error is not None:
                self._fail(rel, p.error)
                continue
            chunks = p.chunks or []
            ids = [c.id for c in chunks]
            old_ids = set(old.chunk_ids) if old else set()
            fresh = [c for c in chunks if c.id not in old_ids]
            cached = self._cached_vectors([c.text_hash for c in fresh]) if fresh else {}
            no_dense: list[str] = []
            for c in fresh:
                vec = cached.get(c.text_hash)
                if vec is None:
                    no_dense.append(c.id)
                new_points.append(PointData(c.id, c.sparse, c.payload, vec))
            id_set = set(ids)
            unembedded = self.missing_dense.get(rel, []) + self.dense_failed.get(rel, [])
            still_missing = [i for i in unembedded if i in id_set and i in old_ids]
            rec = FileRecord(rel, p.digest, p.size, p.mtime_ns, job.language, LEXICAL, ids, [c.id for c in fresh])
            plans.append((rec, sorted(old_ids - id_set), no_dense + still_missing))
        if skips:
            self.manifest.set_skipped(skips)
            self.known_skips.update(skips)
        if touched:
            self.manifest.put_many(touched)
        if plans:
            self._forget_skips([rec.path for rec, _, _ in plans])
            # Write-ahead: record pending ids, then write points, then commit the manifest.
            self.manifest.set_pending_many([(rec.path, rec.pending_ids) for rec, _, _ in plans])
            self.store.upsert(new_points)
            self.store.delete([i for _, stale, _ in plans for i in stale])
            self._unflushed += len(new_points)
            for rec, _, missing in plans:
                rec.pending_ids = []
                rec.status = LEXICAL if missing else DENSE
            self.manifest.put_many([rec for rec, _, _ in plans])
            with self._lock:
                for rec, _, missing in plans:
                    self.records[rec.path] = rec
                    self.pending.discard(rec.path)
                    self.failed.pop(rec.path, None)
                    self.dense_failed.pop(rec.path, None)
                    self.skipped_paths.pop(rec.path, None)
                    if missing:
                        self.missing_dense[rec.path] = missing
                    else:
                        self.missing_dense.pop(rec.path, None)
            self.batches += 1
            self._maybe_flush()
        if self._stale_prepare:
            self._stale_prepare.difference_update(p.rel for _, p in done)
            self._stale_prepare.intersection_update(self.records)  # removed files need nothing
            if not self._stale_prepare:
                self.manifest.set_meta("prepare_rules", _PREPARE_RULES)

    def _fail(self, rel: str, message: str) -> None:
        self._error(rel, message)
        with self._lock:
            self.failed[rel] = message
            self.pending.discard(rel)

    # -- dense backfill ----------------------------------------------------------------------
    def _dense_order(self) -> list[str]:
        with self._lock:
            paths = list(self.missing_dense)
            opened = set(self.open_docs)
            failed_at = dict(self._dense_fail_at)
        # Open files first, files whose last try failed last (so one bad file cannot block the
        # rest), then the most recently modified.
        return sorted(
            paths,
            key=lambda p: (
                p not in opened,
                failed_at.get(p, 0.0),
                -(self.records[p].mtime_ns if p in self.records else 0),
            ),
        )

    def _dense_step(self) -> None:
        assert self.store is not None and self.manifest is not None and self.cache is not None
        self._check_index_dir()
        self.phase = Phase.DENSE
        window: list[tuple[str, str]] = []  # (path, id)
        for path in self._dense_order():
            window.extend((path, i) for i in self.missing_dense[path])
            if len(window) >= _DENSE_WINDOW:
                break
        hits = {h.id: h.payload for h in self.store.retrieve([i for _, i in window])}
        items = [(p, i, hits[i]) for p, i in window if i in hits]
        # Vectors already in the embedding cache are stored without embedding: after a clean
        # warm start every chunk of a lexical file is queued without reading the store.
        if self._snapshot_job is not None:  # its vectors go into the cache before any lookup
            self._snapshot_job.result()
            self._snapshot_job = None
        cached = self._cached_vectors([pl["text_hash"] for _, _, pl in items if "text_hash" in pl])
        if cached:
            self._store_dense(
                [t for t in items if t[2].get("text_hash") in cached],
                [cached[pl["text_hash"]] for _, _, pl in items if pl.get("text_hash") in cached],
                cache=False,
            )
            items = [t for t in items if t[2].get("text_hash") not in cached]
            if not self._jobs.empty() or self._stop.is_set():
                return
        emb = self._model()
        window_texts = [
            embedding_text(pl.get("path", ""), pl.get("symbol"), pl.get("signature"), pl.get("text", ""))
            for _, _, pl in items
        ]
        with_names = name_rerank.usable(emb, self.cache)
        # The embedder groups the whole window (the local model: by token length, each group
        # one full ONNX call); slicing it by a fixed count first left calls 11 % emptier.
        for group in emb.batches(window_texts):
            part = [items[k] for k in group]
            texts = [window_texts[k] for k in group]
            name_vecs = None
            try:
                if with_names:  # the name vectors come from the same forward pass (name_rerank)
                    vecs, name_vecs = emb.embed_with_names(  # type: ignore[attr-defined]
                        texts, [name_text(pl.get("symbol"), pl.get("text", "")) for _, _, pl in part]
                    )
                else:
                    vecs = emb.embed_documents(texts)
                if vecs.shape != (len(texts), emb.dimension):
                    raise EmbeddingError(
                        f"embedder returned shape {vecs.shape}, expected ({len(texts)}, {emb.dimension})"
                    )
            except Exception as exc:
                self._dense_failed(sorted({p for p, _, _ in part}), exc)
                return
            if self.breaker.record_success():
                log.info("embedding provider is back; dense indexing resumes")
            self.embeds += len(texts)
            log.debug("embedded %d chunks", len(texts))
            self._store_dense(part, list(vecs), cache=True)
            if name_vecs is not None:
                self._cache_names(part, name_vecs)
            memory.trim()  # this call's buffers (ONNX Runtime, numpy, the store's) are freed now
            if not self._jobs.empty() or self._stop.is_set():
                return  # let queued changes go first; the backfill resumes after
        # Ids that vanished from the store between steps: rewrite those chunks from the file
        # (dropping them would leave the record lexical forever and the counts off).
        vanished: dict[str, set[str]] = {}
        for p, i in window:
            if i not in hits and i in self.missing_dense.get(p, []):
                vanished.setdefault(p, set()).add(i)
        if vanished:
            with self._lock:
                for p, ids in vanished.items():
                    rest = [i for i in self.missing_dense.pop(p, []) if i not in ids]
                    if p in self.records:
                        rec = self.records[p]
                        self.records.set_chunk_ids(p, [i for i in rec.chunk_ids if i not in ids])
                        rec.hash = ""  # forces a re-chunk; the vanished chunks count as new
                    if rest:
                        self.missing_dense[p] = rest
                    self.pending.add(p)
        if not self.missing_dense:
            self.phase = Phase.IDLE
            self.last_indexed_at = _now()
            self._flush()  # the index is complete: nothing left for a restart to replay

    def _cache_names(self, part: list[tuple[str, str, dict[str, Any]]], vecs: np.ndarray) -> None:
        """The chunks' name vectors into the embedding cache, where queries look them up
        (ragls.name_rerank); not into the index."""
        assert self.cache is not None
        self.cache.put_many(
            {name_rerank.NAME_KEY + pl["text_hash"]: vecs[k] for k, (_, _, pl) in enumerate(part) if "text_hash" in pl}
        )
        self.embeds_names += len(part)

    def _store_dense(self, part: list[tuple[str, str, dict[str, Any]]], vecs: list[np.ndarray], cache: bool) -> None:
        """Store the dense vectors of `part` (path, id, payload) and mark finished files dense."""
        assert self.store is not None and self.manifest is not None and self.cache is not None
        # The window was read before embedding: a change handled since may have removed ids.
        live = {i for p, i, _ in part if i in self.missing_dense.get(p, [])}
        vec_by_id = {i: vecs[k] for k, (_, i, _) in enumerate(part) if i in live}
        if cache:
            self.cache.put_many({pl["text_hash"]: vecs[k] for k, (_, i, pl) in enumerate(part) if i in live})
        self.store.set_dense(vec_by_id)
        self._unflushed += len(vec_by_id)
        done_paths: list[str] = []
        with self._lock:
            for p, i, _ in part:
                rest = self.missing_dense.get(p)
                if rest is None:
                    continue
                if i in rest:
                    rest.remove(i)
                if not rest:
                    del self.missing_dense[p]
                    self.failed.pop(p, None)
                    self._dense_fail_at.pop(p, None)
                    if p in self.records:
                        self.records.set_status(p, DENSE)
                        done_paths.append(p)
        self.manifest.set_status(done_paths, DENSE)
        self._maybe_flush()
        self._on_change()

    def _maybe_flush(self) -> None:
        """Flush the store after _FLUSH_POINTS points or _FLUSH_AGE_S seconds (a restart after a
        crash replays the write-ahead log written since; a flush stalls every request), and
        keep what the batches since left alive out of the garbage collector's walks."""
        if self._unflushed - self._frozen_at >= _FREEZE_POINTS:
            _freeze_heap()  # what the batches since left alive: records, ids
            self._frozen_at = self._unflushed
        if self._unflushed >= _FLUSH_POINTS or time.monotonic() - self._flushed_at > _FLUSH_AGE_S:
            self._flush()

    def _flush(self) -> None:
        if self.store is not None:
            self.store.flush()
            self._flushed_at = time.monotonic()
            self._unflushed = self._frozen_at = 0

    def _dense_failed(self, paths: list[str], exc: Exception) -> None:
        was_open = self.breaker.is_open
        now_open = self.breaker.record_failure(str(exc))
        if not was_open:
            for p in paths:
                self._error(p, f"embedding failed: {exc}")
        now = time.monotonic()
        with self._lock:
            for p in paths:
                self._dense_fail_at[p] = now
                if now_open:
                    # Counted as failed while the provider is down (their lexical chunks stay
                    # searchable); they stay queued, so the probe and the recovery pick them up.
                    self.failed[p] = f"embedding failed: {exc}"
        if now_open and not was_open:
            log.warning("%s", self.breaker.describe())


def _freeze_heap() -> None:
    """Leave the objects alive now (modules, records, chunk ids) out of future garbage
    collections. A full collection walks every tracked object with the GIL held: during a
    files10k pass each took 44-81 ms, every 8-10 s, and stalled every request (they freed
    nothing). Frozen objects are still freed when their last reference goes."""
    gc.freeze()


class _IndexReplaced(Exception):
    """The embedded index's folder is not the one that was opened any more."""


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def _is_disk_full(exc: Exception) -> bool:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    return isinstance(exc, sqlite3.OperationalError) and "full" in str(exc)
