"""Scans and change sets: discovery, the plan (plan.py), then the lexical pass over the files
to prepare, in batches of 64 files, stored by the writer (apply.py). A large pass is prepared
by worker processes (ingest/prepare.py); a small one in the indexer thread, where it starts at once.
Between batches, queued changes and asked-for files (ingest/seek.py) go first."""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from ragls.config import Settings
from ragls.index.apply import IndexWriter
from ragls.index.handle import IndexHandle
from ragls.index.jobs import JobQueue
from ragls.index.plan import plan_scan
from ragls.index.state import IndexState, Phase, now
from ragls.ingest.discovery import Discovery, IgnoreRules, discover
from ragls.ingest.prepare import FileJob, Prepared, PreparePool
from ragls.store import previous_manifest_bytes
from ragls.system.threads import in_thread

log = logging.getLogger(__name__)

_LEXICAL_BATCH_FILES = 64
# A pass over at least this many files is prepared by worker processes, in tasks of
# _POOL_TASK_FILES files, with _POOL_DEPTH tasks per worker in flight; smaller ones (a save, an
# open buffer) in the indexer thread, where they start at once.
_POOL_MIN_FILES = 200
_POOL_TASK_FILES = 16
_POOL_DEPTH = 2
# A folder whose last manifest is at least this large (~1,200 files) is walked in a pool worker
# on open: in this process its discovery waits for the GIL the shard load holds, ~0.8 s at
# 150,000 chunks; a small folder walks in a few ms, which a worker's start-up would not pay for.
_DISCOVERY_IN_WORKER_BYTES = 1 << 20


class LexicalPass:
    def __init__(
        self,
        state: IndexState,
        handle: IndexHandle,
        writer: IndexWriter,
        jobs: JobQueue,
        rules: IgnoreRules,
        pool: PreparePool | None,
        on_change: Callable[[], None],
    ) -> None:
        self.state = state
        self.handle = handle
        self.writer = writer
        self.jobs = jobs
        self.rules = rules
        self.root: Path = handle.root
        self.settings: Settings = handle.settings
        self.pool = pool  # None: one core, or a worker died (the pass goes on in this thread)
        self._on_change = on_change
        self.pool_min_files = _POOL_MIN_FILES  # tests lower it to exercise the pool on small folders
        self.discovery_worker_bytes = _DISCOVERY_IN_WORKER_BYTES  # ...and this one
        self._discovery: Future[Discovery] | None = None  # the first scan's, begun with the open
        self._redone: set[str] | None = None  # indexed by a change while a pooled pass runs

    def begin_discovery(self) -> None:
        """The first scan's walk, started before the index opens: a warm start is mostly the
        shard load, which holds the GIL (~0.8 s at 150,000 chunks), so a large folder is walked
        in a worker process meanwhile (in a thread it would wait for the GIL)."""
        self.rules.invalidate()
        if self.pool is not None and previous_manifest_bytes(self.root, self.settings) >= self.discovery_worker_bytes:
            self._discovery = self.pool.discover(self.root, self.settings)
            self.state.worker_discoveries += 1
        else:
            self._discovery = in_thread(self.settings.indexing.nice, discover, self.root, self.settings, self.rules)

    def close_pool(self, wait: bool = False) -> None:
        if self.pool is not None:
            self.pool.close(wait)

    # -- scans and changes -------------------------------------------------------------------
    def scan(self, full: bool) -> None:
        st, h = self.state, self.handle
        assert h.store is not None and h.manifest is not None
        st.phase = Phase.DISCOVERING
        st.runs += 1
        st.scans += 1
        self._on_change()
        if full:
            self.writer.remove(list(st.records))
        early, self._discovery = self._discovery, None
        if early is not None and not full:
            found = self._early_discovery(early)  # started when the index opened, moments ago
        else:
            self.rules.invalidate()
            found = discover(self.root, self.settings, self.rules)
        current = {f.rel: f for f in found.files}
        with st.lock:
            st.skipped_paths = dict(found.skipped_files)
            st.skipped_other = found.skipped - Counter(found.skipped_files.values())
            st.failed.clear()
            # Files whose embedding gave up last time get another try.
            for p, ids in st.dense_failed.items():
                st.missing_dense.setdefault(p, []).extend(i for i in ids if i not in st.missing_dense[p])
            st.dense_failed.clear()
        plan = plan_scan(current, st.records, st.known_skips, st.open_docs, st.stale_prepare)
        self.writer.remove(plan.removed)
        self.writer.forget_skips(plan.forgotten_skips)  # gone, or ignored now
        with st.lock:
            st.skipped_paths.update(plan.unchanged_skips)
            st.pending = set(plan.todo)
        st.phase = Phase.LEXICAL
        self._on_change()  # the status shows the pass's total before its first batch
        log.info(
            "scan: %d files, %d to (re)index, %d removed, %d skipped",
            len(current),
            len(plan.todo),
            len(plan.removed),
            sum(found.skipped.values()),
        )
        if not self._index_many(plan.todo, handle_jobs=True):
            return
        st.phase = Phase.DENSE if st.missing_dense else Phase.IDLE
        st.last_indexed_at = now()

    def _early_discovery(self, early: Future[Discovery]) -> Discovery:
        from concurrent.futures import CancelledError
        from concurrent.futures.process import BrokenProcessPool

        try:
            return early.result()
        except (BrokenProcessPool, CancelledError):  # the worker died (out of memory?): walk here instead
            log.warning("the discovery worker stopped; walking the folder in the indexer thread")
            self.close_pool()
            self.rules.invalidate()
            return discover(self.root, self.settings, self.rules)

    def apply_changes(self, paths: set[str]) -> None:
        st = self.state
        st.change_jobs += 1
        st.runs += 1
        if any(p.rsplit("/", 1)[-1] in (".gitignore", ".ragignore") for p in paths) or any(
            (self.root / p).is_dir() for p in paths
        ):
            # Ignore rules changed, or a whole directory moved in (inotify reports only the
            # directory): rescan; unchanged files cost a stat each.
            self.jobs.scan(False)
            return
        todo: list[str] = []
        gone: list[str] = []
        for rel in sorted(paths):
            full = self.root / rel
            if rel in st.open_docs:
                todo.append(rel)
            elif full.is_file():
                todo.append(rel)
            else:
                # A deleted directory arrives as one path: drop everything under it.
                prefix = rel.rstrip("/") + "/"
                gone.append(rel)
                gone.extend(p for p in st.records if p.startswith(prefix))
        self.writer.remove([p for p in gone if p in st.records])
        if self._redone is not None:  # a pooled pass in flight must not overwrite these
            self._redone.update(todo, gone)
        with st.lock:
            for p in gone:
                st.failed.pop(p, None)
                st.skipped_paths.pop(p, None)
        if todo:
            with st.lock:
                st.pending |= set(todo)
            prev_phase = st.phase
            st.phase = Phase.LEXICAL
            for i in range(0, len(todo), _LEXICAL_BATCH_FILES):
                self.writer.index_files(todo[i : i + _LEXICAL_BATCH_FILES])
            st.phase = (
                Phase.DENSE if st.missing_dense else (Phase.IDLE if prev_phase != Phase.DISCOVERING else prev_phase)
            )
        st.last_indexed_at = now()

    # -- the pass ----------------------------------------------------------------------------
    def index_pending(self) -> None:
        """Files discovered but not yet indexed (after a scan, or left by a failed batch)."""
        st = self.state
        with st.lock:
            first = set(st.open_docs) | st.urgent.keys()
            todo = sorted(st.pending, key=lambda r: (r not in first, r))
        st.phase = Phase.LEXICAL
        if not self._index_many(todo, handle_jobs=False):
            return  # changes and scans go first; the rest stays pending
        st.phase = Phase.DENSE if st.missing_dense else Phase.IDLE
        st.last_indexed_at = now()

    def _index_many(self, todo: list[str], handle_jobs: bool) -> bool:
        """The lexical pass over `todo`, in order. Between batches, queued changes are handled
        at once (`handle_jobs`, a scan) or end the pass (the rest stays pending). False when
        the pass ended early."""
        if self.pool is None or len(todo) < self.pool_min_files:
            self.close_pool()  # started for the discovery only: an idle server keeps no workers
            for i in range(0, len(todo), _LEXICAL_BATCH_FILES):
                if self.jobs.stopping() or (not handle_jobs and not self.jobs.empty()):
                    return False
                self.writer.index_files(todo[i : i + _LEXICAL_BATCH_FILES])
                if not self._between_batches(handle_jobs):
                    return False
            return True
        try:
            return self._index_pooled(todo, handle_jobs)
        finally:
            # An idle server keeps no worker processes (None: a worker died); they are gone
            # before the dense pass starts (workers still exiting beside it took server + workers
            # to 1,039 MB at 150,000 chunks; waiting for them, 1,020 MB).
            self.close_pool(wait=True)
            self.handle.maybe_flush()
            self.handle.release_memory(force=True)

    def _index_pooled(self, todo: list[str], handle_jobs: bool) -> bool:
        """Worker processes parse, chunk and tokenize; this thread plans each task (the checks
        that need the index's state) and stores the results in order, a few tasks ahead."""
        from concurrent.futures.process import BrokenProcessPool

        assert self.pool is not None
        s = self.settings
        root = str(self.root)
        self._redone = set()
        self.state.pooled_passes += 1
        tasks = (todo[i : i + _POOL_TASK_FILES] for i in range(0, len(todo), _POOL_TASK_FILES))
        inflight: deque[tuple[list[FileJob], Future[list[Prepared]]]] = deque()
        depth = _POOL_DEPTH * self.pool.workers
        try:
            while True:
                while len(inflight) < depth and (task := next(tasks, None)) is not None:
                    if jobs := self.writer.jobs_for(task):
                        inflight.append((jobs, self.pool.submit(root, jobs, s.indexing, s.max_file_bytes)))
                if not inflight:
                    return True
                jobs, fut = inflight.popleft()
                try:
                    results = fut.result()
                except BrokenProcessPool:
                    # A worker died (a crashing grammar, the OOM killer): finish in this thread.
                    log.warning("a lexical worker process died; indexing on in this process")
                    self.pool.close()
                    self.pool = None
                    rest = [j.rel for j in jobs] + [j.rel for js, _ in inflight for j in js]
                    rest += [r for t in tasks for r in t]
                    inflight.clear()
                    return self._index_many(rest, handle_jobs)
                redone = self._redone or set()
                self.writer.apply([(j, p) for j, p in zip(jobs, results, strict=True) if p.rel not in redone])
                if not self._between_batches(handle_jobs):
                    return False
        finally:
            for _, fut in inflight:
                fut.cancel()
            self._redone = None

    def _between_batches(self, handle_jobs: bool) -> bool:
        self._on_change()
        self.handle.release_memory()  # the batch's results are freed, its points written
        if self.jobs.stopping():
            return False
        self.state.apply_edits(self.jobs.edits())  # files a question named, buffers
        self._index_urgent()
        if not self.jobs.empty():
            if not handle_jobs:
                return False
            # A change arrived mid-scan (a save, an opened file): handle it now, continue after.
            jobs = self.jobs.drain(block=False)
            if jobs.scan:
                self.jobs.scan(jobs.full)
            if jobs.paths:
                self.apply_changes(jobs.paths)
        return True

    def _index_urgent(self) -> None:
        """Asked-for files still waiting: a batch of them now, in this thread (the running pass
        drops its own results for them, like for a change)."""
        st = self.state
        with st.lock:
            if not st.urgent:
                return
            ready = [p for p in st.urgent if p in st.pending]
            todo = ready[:_LEXICAL_BATCH_FILES]
            st.urgent = dict.fromkeys(ready[_LEXICAL_BATCH_FILES:])
        if todo:
            if self._redone is not None:
                self._redone.update(todo)
            self.writer.index_files(todo)
