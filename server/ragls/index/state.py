"""What the index knows about every file, in memory, and what the worker publishes of it.

The worker thread is the only writer: it reads without the lock and writes under it; other
threads post their edits (open buffers, asked-for files, a retry, an error) to its queue
(`jobs.py`), and it applies them between steps (`apply_edits`). After each step it publishes a
`Published`: the status's counters and the files' records (which chunks make each file now),
swapped in one assignment. The status and queries read the last one and never take the lock
(a query sees the chunks of the last published records only: index/view.py); the seeker still
reads the pending files under it (tests/unit/test_state_owner.py checks who writes)."""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from ragls.status import ErrorEntry, IndexCounters, SnapshotCounts
from ragls.store.manifest import DENSE, LEXICAL, FileRecord, SkippedFile
from ragls.system.faults import Fault

if TYPE_CHECKING:
    from ragls.index.handle import IndexHandle

log = logging.getLogger(__name__)

_MAX_ERRORS = 50


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


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Records(dict[str, FileRecord]):
    """path -> FileRecord, keeping the counts the status reports as records come and go, so
    a status request costs O(1) instead of a walk over every record while the indexer
    competes for the GIL. Change a stored record's status or chunk ids only through
    `set_status` / `set_chunk_ids`."""

    def __init__(self, items: Iterable[tuple[str, FileRecord]] = ()) -> None:
        super().__init__(items)  # in bulk: a warm start loads every record of the manifest
        self.version = 0  # counts changes of a record (a new one is published then)
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
        self.version += 1
        super().__setitem__(key, rec)
        self._count(rec, 1)

    def __delitem__(self, key: str) -> None:
        self._count(self[key], -1)
        super().__delitem__(key)
        self.version += 1

    def pop(self, key: str, *default: FileRecord | None) -> FileRecord | None:  # type: ignore[override]
        if key in self:
            rec = super().pop(key)
            self._count(rec, -1)
            self.version += 1
            return rec
        if default:
            return default[0]
        raise KeyError(key)

    def clear(self) -> None:
        super().clear()
        self.lexical = self.dense = self.chunks = 0
        self.version += 1

    def set_status(self, key: str, status: str) -> None:
        rec = self[key]
        self._count(rec, -1)
        rec.status = status
        self._count(rec, 1)

    def set_chunk_ids(self, key: str, ids: list[str], digest: str) -> None:
        """A new record with these chunk ids and content hash (never a change in place: the
        published records keep the old one)."""
        self[key] = replace(self[key], chunk_ids=ids, hash=digest)


@dataclass(frozen=True)
class Published:
    """What the worker last published: read by any thread without a lock, never changed."""

    counters: IndexCounters
    records: Mapping[str, FileRecord]  # a copy: path -> its record (a query's visible chunks)
    version: int  # `Records.version` the records were copied at

    @cached_property
    def paths(self) -> tuple[str, ...]:
        """The indexed files (retrieval's path filter, mentioned files), read once per snapshot."""
        return tuple(self.records)


@dataclass(frozen=True)
class Edit:
    """A change to the state asked for by another thread, applied by the worker between steps:
    `buffer` an editor buffer's text (None: closed), `urgent` files a question named,
    `retry` a waiting fault tried again now, `error` a message for the status."""

    kind: Literal["buffer", "urgent", "retry", "error"]
    path: str = ""
    text: str | None = None
    paths: tuple[str, ...] = ()


class IndexState:
    """The in-memory half of the index: records, the queues of work, skips, failures, open
    editor buffers, errors, the phase and the run counters."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # guards everything below
        self.records = Records()
        self.pending: set[str] = set()  # discovered, not yet processed
        self.missing_dense: dict[str, list[str]] = {}  # file -> chunk ids still without a dense vector
        self.dense_failed: dict[str, list[str]] = {}  # gave up this pass; retried on the next scan
        self.dense_fail_at: dict[str, float] = {}  # file -> when its last dense batch failed
        self.failed: dict[str, str] = {}
        self.skipped_other: Counter[str] = Counter()  # directories, links: counted, not per path
        self.skipped_paths: dict[str, str] = {}  # file -> why it is not indexed
        # Files skipped for their content, as the manifest keeps them (not read again unchanged).
        self.known_skips: dict[str, SkippedFile] = {}
        self.stale_prepare: set[str] = set()  # files prepared under older rules (apply._PREPARE_RULES)
        self.open_docs: dict[str, str] = {}  # editor buffers: path -> text
        # Files that spell a name a question asked for (ingest/seek.py), still waiting in a pass:
        # indexed at the next batch boundary instead of in pass order. (Opened and saved
        # files are changes, which a pass handles at its next boundary already.)
        self.urgent: dict[str, None] = {}
        self.errors: deque[ErrorEntry] = deque(maxlen=_MAX_ERRORS)
        self.phase: Phase = Phase.STARTING
        self.fault: Fault | None = None  # the worker waits for its retry time (worker.py)
        self.last_indexed_at: str | None = None
        # Counters of work done, for the status, tests and benchmarks.
        self.embeds = 0  # chunks embedded
        self.embeds_names = 0  # name vectors cached (ragls.index.name_rerank)
        self.batches = 0  # lexical batches applied
        self.change_jobs = 0  # coalesced change sets handled (a burst of saves is one)
        self.runs = 0  # scans and change sets started: lets the progress reporter see short runs
        self.scans = 0
        self.pooled_passes = 0  # lexical passes prepared by worker processes
        self.worker_discoveries = 0  # first scans walked by a pool worker
        # What the worker last published (`publish`): the status and queries read only this.
        self.published: Published | None = None
        self._published_records: Records | None = None  # the object `published.records` came from

    def error(self, path: str, message: str) -> None:
        """An error for the status (the worker's; other threads post an `Edit("error")`)."""
        log.warning("%s%s", f"{path}: " if path else "", message)
        with self.lock:
            self.errors.append(ErrorEntry(path, message, now()))

    def paths(self) -> tuple[str, ...]:
        """The indexed files as last published (retrieval's path filter reads them)."""
        published = self.published
        return published.paths if published is not None else ()

    def forget_files(self) -> None:
        """The index is gone (its folder removed or replaced): know no file until a rescan."""
        with self.lock:
            self.records = Records()
            self.missing_dense.clear()
            self.dense_failed.clear()
            self.failed.clear()
            self.pending.clear()
            self.dense_fail_at.clear()

    def apply_edits(self, edits: Iterable[Edit]) -> None:
        """Other threads' edits, in the order they were posted (the worker's, between steps).
        A buffer's path is indexed again by the job posted with it (`JobQueue.buffer`)."""
        for e in edits:
            if e.kind == "error":
                self.error(e.path, e.text or "")
                continue
            with self.lock:
                if e.kind == "buffer":
                    if e.text is None:
                        self.open_docs.pop(e.path, None)
                    else:
                        self.open_docs[e.path] = e.text
                elif e.kind == "urgent":
                    self.urgent.update(dict.fromkeys(e.paths))
                elif e.kind == "retry" and self.fault is not None:
                    self.fault.retry_at = 0.0
                    self.fault.need = 0

    def publish(self, handle: IndexHandle, queued: bool) -> Published:
        """Read the counters (and the records, when they changed) under the lock and publish
        them in one assignment (the worker's, after each step and batch)."""
        counters = self.counters(handle, queued)
        last = self.published
        version = self.records.version
        if last is not None and last.version == version and self.records is self._published_records:
            records = last.records
        else:
            with self.lock:
                records, version = dict(self.records), self.records.version
            self._published_records = self.records
        self.published = Published(counters, records, version)
        return self.published

    def counters(self, handle: IndexHandle, queued: bool) -> IndexCounters:
        """The status's numbers, state and phase, read at once. `queued`: the worker has jobs
        waiting."""
        breaker = handle.breaker
        with self.lock:
            recs = self.records
            lexical_done, chunks = recs.lexical, recs.chunks
            failed = len(self.failed)
            waiting = sum(1 for p in self.pending if p not in self.failed)
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
            message = handle.fatal or handle.notice
            if message is None and handle.model_error:
                message = f"the embedding model could not be loaded ({handle.model_error}); search is lexical only"
            if handle.fatal:
                state, phase = "error", "error"
            elif self.fault is not None:
                state, phase, message = "error", "waiting", self.fault.describe()
            elif breaker.is_open and not breaker.allow() and self.missing_dense and not self.pending:
                state, phase, message = "error", "paused", breaker.describe()
            elif self.phase in ("starting", "discovering") or self.pending or self.missing_dense or queued:
                state, phase = "indexing", self.phase
            elif handle.model_loading():
                # Every file is searchable, lexically; the dense half waits for the model (a
                # moment after the index opens), so not `ready` yet (protocol.md).
                state, phase = "indexing", "dense"
            elif handle.model_error:
                # Nothing left to embed, but no model for the questions either: lexical only,
                # like a provider that is down (with chunks to embed, the fault above says it).
                state, phase = "error", "paused"
            else:
                state, phase = "ready", "idle"
            cache = handle.cache
            hits, misses = (cache.hits, cache.misses) if cache else (0, 0)
            report = handle.snapshot_import
            return IndexCounters(
                state=state,
                phase=phase,
                message=message,
                files_total=total,
                files_indexed=dense_done,
                files_failed=failed,
                skipped_by_reason=dict(skipped),
                chunks=chunks,
                lexical_done=lexical_done,
                searchable=total - failed if total >= failed else total,
                last_indexed_at=self.last_indexed_at,
                cache_hits=hits,
                cache_misses=misses,
                embedded=self.embeds,
                snapshot=None
                if report is None
                else SnapshotCounts(
                    report.source, report.state, report.vectors, handle.snapshot_reused, report.message
                ),
                errors=tuple(self.errors),
                workspace=str(handle.root),
                warnings=tuple(handle.warnings()),
                waiting=waiting,
            )
