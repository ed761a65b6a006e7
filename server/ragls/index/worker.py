"""The indexer: one worker thread that owns every write, so the store and manifest never see
two writers. Jobs (scans, file changes, open buffers) are drained and coalesced before each
step: a burst of 5,000 changes is one batch. Between jobs the worker backfills dense vectors,
open files first, then the most recently modified.

Every step either completes, or leaves its work queued and sets a fault with a retry time
(docs/reliability.md, "The fault model"); until then the worker sleeps. The parts: `state`
(what is known, one lock), `handle` (the open resources; queries read it), `lexical`
(scans, changes, the lexical pass), `backfill` (dense vectors), `writer` (store and manifest
writes)."""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from ragls.config import Settings
from ragls.embedding import Embedder, EmbeddingError
from ragls.index.apply import IndexWriter, load_kept, reconcile
from ragls.index.backfill import Backfill
from ragls.index.handle import IndexHandle, IndexReplaced, ModelUnavailable
from ragls.index.jobs import JobQueue, Jobs
from ragls.index.lexical_pass import LexicalPass
from ragls.index.state import IndexState, Phase, Published, Records
from ragls.ingest.discovery import IgnoreRules
from ragls.ingest.prepare import PreparePool
from ragls.ingest.seek import Seeker
from ragls.protocol import IndexStatus
from ragls.status import IndexCounters, index_status
from ragls.store import StoreCorrupt, StoreError, StoreFull
from ragls.system import memory
from ragls.system.faults import Backoff, Fault
from ragls.system.threads import lower_priority

log = logging.getLogger(__name__)

_POOL_MAX_WORKERS = 8
_SWITCH_INTERVAL_S = 0.001  # while the indexer works


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
        self.settings = settings
        self.rules = IgnoreRules(self.root, settings)
        self._on_change = on_change or (lambda: None)
        self.state = IndexState()
        self.jobs = JobQueue()
        # The handle's threads (the model's load) post errors and wake the worker, which
        # publishes the status they change; they never write the state themselves.
        self.handle = IndexHandle(
            self.root, settings, embedder, store_wait, self.jobs.error, self.jobs.wake, self.seek, self._published
        )
        self._thread: threading.Thread | None = None
        # A restart (settings change) opens the same slot only after the previous indexer of
        # this folder closed it: `after` is that indexer's `closed`.
        self._after = after
        self.closed = threading.Event()
        # A worker fault waits with bounded backoff (docs/reliability.md).
        self._fault_backoff = Backoff(1.0, 60.0)
        # Lexical worker processes: one per core by default; fewer than 2 means none.
        workers = workers if workers is not None else min(os.cpu_count() or 1, _POOL_MAX_WORKERS)
        pool = PreparePool(workers, settings.indexing.nice) if workers > 1 else None
        self.writer = IndexWriter(self.state, self.handle, self.rules)
        self.lexical = LexicalPass(self.state, self.handle, self.writer, self.jobs, self.rules, pool, self._changed)
        self.backfill = Backfill(self.state, self.handle, self.jobs.interrupted, self._changed, self._recovered)
        self.seeker = Seeker(
            self.root,
            settings.max_file_bytes,
            self._waiting,
            self.prioritize,
            lambda: self.state.scans,
            settings.indexing.nice,
        )
        self.state.publish(self.handle, queued=False)  # "starting": the status has one from now on

    # -- public, thread-safe: these post jobs and read what the worker published ----------------
    def start(self) -> None:
        # The indexer thread runs Python for seconds at a time; a request thread waiting for the
        # GIL gets it after at most one switch interval, and a request takes dozens of hand-offs.
        # 1 ms instead of the default 5 keeps requests short while indexing, at a small cost in
        # throughput (process-wide, set once).
        sys.setswitchinterval(min(sys.getswitchinterval(), _SWITCH_INTERVAL_S))
        self._thread = threading.Thread(target=self._run, name="ragls-indexer", daemon=True)
        self._thread.start()

    def request_scan(self, full: bool = False) -> None:
        self.jobs.scan(full)

    def retry_now(self) -> None:
        """A user's reindex: waiting faults and a paused provider are tried again at once."""
        self.handle.breaker.probe_now()
        self.jobs.retry()

    def notify_changes(self, paths: set[str]) -> None:
        if paths:
            self.jobs.paths(set(paths))

    def set_buffer(self, rel: str, text: str | None) -> None:
        """An editor buffer's text wins over the file on disk from now on (None: closed, the
        file's text again); the file is indexed again either way."""
        self.jobs.buffer(rel, text)

    def prioritize(self, paths: Iterable[str]) -> None:
        """Index these (if still waiting) at the next batch boundary of the running pass."""
        self.jobs.urgent(paths)

    def seek(self, names: list[str]) -> None:
        """A question named these definitions: while files wait, send the ones that spell a
        name ahead (ingest/seek.py). Returns at once."""
        if names and self.state.pending:
            self.seeker.seek(names)

    def _waiting(self) -> list[str]:
        with self.state.lock:
            return [p for p in self.state.pending if p not in self.state.urgent]

    def stop(self, timeout: float = 1.5) -> bool:
        """Ask the worker to stop; it closes the store itself after its current batch (never
        under a write). Returns True when the store is closed within `timeout`."""
        self.jobs.stop()
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
        return self.counters().state == "indexing"

    def indexed_paths(self) -> list[str]:
        return list(self.state.paths())

    def counters(self) -> IndexCounters:
        """The last published counters, read without a lock; "indexing" while a job posted
        since, or a retry asked for, is not in them yet."""
        published = self.state.published
        assert published is not None  # published once in __init__
        counters = published.counters
        if counters.state == "ready" and not self.jobs.settled():
            counters = replace(counters, state="indexing")
        elif counters.state == "error" and counters.phase != "error" and self.jobs.retrying():
            # A user's retry (a reindex) is on its way: the waiting fault or paused provider is
            # being tried again, with a scan queued behind it.
            counters = replace(counters, state="indexing", phase="discovering", message=None)
        return counters

    def snapshot(self) -> IndexStatus:
        """The index's state and counters (see status.build_status for the whole status)."""
        return index_status(self.counters(), self.settings, self.handle.embedder, self.handle.store)

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
        h = self.handle
        delay = 1.0
        while True:
            try:
                self._open()
                break
            except StoreCorrupt as exc:
                # Never ask the user to wipe by hand: keep the broken copy aside, rebuild (the
                # embedding cache means nothing is embedded again).
                self._close()
                h.quarantine(str(exc))
            except (StoreError, EmbeddingError) as exc:
                # An unreachable server or provider may come back: say so in the status and retry.
                self._close()
                h.fatal = f"{exc} (retrying in {delay:.0f}s)"
                log.error("%s", h.fatal)
                h.ready.set()
                self._changed()
                if self.jobs.sleep(delay):
                    return False
                delay = min(delay * 2, 60.0)
            except Exception as exc:  # any other failure to open must become a visible status, not a crash
                h.fatal = f"cannot start indexer: {exc}"
                log.error("%s", h.fatal)
                h.ready.set()
                self._changed()
                return False
        h.fatal = None
        h.ready.set()
        return True

    def _open(self) -> None:
        lower_priority(self.settings.indexing.nice)
        # A warm start is mostly the shard load, which holds the GIL: the first scan's
        # discovery walks the tree meanwhile, and the bundled model loads once the index is
        # open (its load needs the GIL for much of its 0.2 s, 1.1 s beside the shard load; both
        # changes took the warm restart at 150,000 chunks from 2.18 to 1.76 s).
        self.lexical.begin_discovery()
        self.handle.open()
        assert self.handle.manifest is not None
        load_kept(self.state, self.handle.manifest)
        records = Records(self.handle.manifest.all().items())
        with self.state.lock:
            self.state.records = records
        reconcile(self.state, self.handle)
        # Files whose vectors came from a snapshot that some index distrusted since: embed again.
        self.backfill.requeue(self.handle.distrusted_files())
        self.handle.load_model()
        memory.freeze_heap()
        self._changed()  # the stored files are searchable from here, before the first scan
        self.jobs.scan(False)

    def _close(self) -> None:
        self.handle.close()
        self.lexical.close_pool()

    def _has_work(self) -> bool:
        return bool(self.state.pending) or (bool(self.state.missing_dense) and self.handle.breaker.allow())

    def _loop(self) -> None:
        """The worker: scans and changes first, then pending files, then dense backfill. Every
        step either completes, or leaves its work queued and sets a fault with a retry time;
        until then the worker sleeps (no step runs, so nothing spins)."""
        st, h = self.state, self.handle
        while not self.jobs.stopping():
            st.apply_edits(self.jobs.edits())
            if st.fault is not None and not _fault_due(st.fault):
                self._changed()  # what other threads changed meanwhile (the model loaded, say)
                self.jobs.sleep(0.5)
                continue
            jobs = self.jobs.drain(block=not self._has_work())
            if self.jobs.stopping():
                break
            st.apply_edits(self.jobs.edits())  # a buffer's text, before its path is indexed
            try:
                if jobs.scan:
                    self.lexical.scan(full=jobs.full)
                if jobs.paths:
                    self.lexical.apply_changes(jobs.paths)
                if not jobs.scan and not jobs.paths:
                    if st.pending:
                        self.lexical.index_pending()
                    elif st.missing_dense and h.breaker.allow():
                        self.backfill.step()
                if h.store is not None and self.jobs.empty() and not self._has_work():
                    # Caught up: let the points this batch deleted stop counting in BM25's IDF.
                    if h.store.vacuum():
                        log.info("reloaded the index so deleted chunks stop counting in lexical scores")
                self._recovered()
            except IndexReplaced:
                self._reopen_replaced_index(jobs)
            except Exception as exc:  # every failure becomes a fault with a retry time
                if h.replaced():
                    self._reopen_replaced_index(jobs)  # the write failed because the folder went away
                else:
                    self._set_fault(exc, jobs)
            self._changed()

    def _published(self) -> Published | None:
        return self.state.published

    def _changed(self) -> None:
        """Publish the state as it is now (the worker's, after each step and batch), then tell
        the front ends."""
        self.state.publish(self.handle, queued=not self.jobs.empty())
        self.jobs.published()
        self._on_change()

    def _recovered(self) -> None:
        """A step (or one write of a long step) went through: the fault that stopped it is over."""
        st = self.state
        with st.lock:
            fault, st.fault = st.fault, None
        if fault is not None:
            log.info("recovered: %s", fault.message)
            self._fault_backoff.reset()
            self._changed()

    def _reopen_replaced_index(self, jobs: Jobs) -> None:
        """The index folder was removed or replaced under us (a cleanup script, a restored
        backup): reopen at that path and rebuild from the files, never write into a ghost."""
        msg = f"the index folder {self.handle.index_dir} was removed or replaced; rebuilding the index"
        log.warning("%s", msg)
        self.state.error("", msg)
        self._close()
        self.state.forget_files()
        self.handle.index_dir = None
        self.state.phase = Phase.STARTING  # "indexing" until the rescan below has rebuilt the records
        if jobs.paths:
            self.jobs.paths(jobs.paths)
        try:
            self._open()  # queues a full scan
        except Exception as exc:
            self._close()
            self._set_fault(exc if isinstance(exc, StoreError) else StoreError(str(exc)), Jobs())

    def _set_fault(self, exc: Exception, jobs: Jobs) -> None:
        # The step's work stays queued: pending files stay pending, a scan or change set is put back.
        st = self.state
        if jobs.scan and st.phase == Phase.DISCOVERING:
            self.jobs.scan(jobs.full)
        elif jobs.paths:
            self.jobs.paths(jobs.paths)
        kind, delay, message, need, where = _classify(exc, self._fault_backoff)
        same = st.fault is not None and st.fault.message == message
        with st.lock:
            st.fault = Fault(kind, message, time.monotonic() + delay, need, where)
        if not same:  # one error entry per distinct fault, not one per retry
            st.error("", f"{message} (retrying in {delay:.0f}s)")


def _classify(exc: Exception, backoff: Backoff) -> tuple[str, float, str, int, str]:
    """A step's failure as a fault: (kind, delay before the retry, message, free bytes needed,
    full directory). A full disk is re-checked every 5 s; the rest back off 1 s doubling to 60 s."""
    need, where = 0, ""
    if isinstance(exc, StoreFull) or _is_disk_full(exc):
        kind, delay = "disk", 5.0
        need, where = getattr(exc, "need", 0), getattr(exc, "where", "")
        message = str(exc) if isinstance(exc, StoreFull) else f"no space left for the index: {exc}"
    elif isinstance(exc, StoreError):
        kind, delay, message = "store", backoff.next_delay(), f"store error: {exc}"
    elif isinstance(exc, sqlite3.Error):
        kind, delay, message = "manifest", backoff.next_delay(), f"manifest error: {exc}"
    elif isinstance(exc, ModelUnavailable):
        kind, delay, message = "model", backoff.next_delay(), f"cannot load the embedding model: {exc}"
    else:
        log.exception("indexer step failed")
        kind, delay, message = "internal", backoff.next_delay(), f"internal error: {exc!r}"
    return kind, delay, message, need, where


def _fault_due(fault: Fault) -> bool:
    """Is the fault's retry time here (and, for a full disk, the space it needs free)?"""
    if time.monotonic() < fault.retry_at:
        return False
    if fault.kind == "disk" and fault.need and fault.where:
        # Cheap check first: no work is redone until the space is there.
        try:
            free = shutil.disk_usage(fault.where).free
        except OSError:
            free = 0
        if free < fault.need:
            fault.retry_at = time.monotonic() + 5.0
            return False
    return True


def _is_disk_full(exc: Exception) -> bool:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    return isinstance(exc, sqlite3.OperationalError) and "full" in str(exc)
