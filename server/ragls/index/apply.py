"""Every store and manifest write of the lexical pass: prepared files in, points, manifest
records and in-memory records out, in the crash-safe order of docs/reliability.md (pending ids,
then points, then the record). Also the checks a file needs before it is prepared (they read
the index's state), removals and skips, and `reconcile`, which makes the manifest and the store
agree when the index opens."""

from __future__ import annotations

import logging
from pathlib import Path

from ragls.chunking import CHUNKS_VERSION
from ragls.config import Settings
from ragls.graph.model import GRAPH_FORMAT, FileGraph
from ragls.index.handle import IndexHandle
from ragls.index.plan import is_complete
from ragls.index.state import IndexState, Records
from ragls.ingest.discovery import CONTENT_CHECKS, IgnoreRules, classify, link_skip
from ragls.ingest.prepare import TOO_MANY_CHUNKS, FileJob, Prepared, prepare_file
from ragls.ingest.secrets import RULES_VERSION, is_secret_file
from ragls.store import PointData
from ragls.store.manifest import DELETING, DENSE, LEXICAL, FileRecord, Manifest, SkippedFile
from ragls.text.languages import language_of

log = logging.getLogger(__name__)

# Skip reasons decided by a file's content: kept in the manifest with the file's size and mtime
# (a warm start would read every such file again otherwise: 69 of 13,275 at chunks150k).
# Not `too_large`: that depends on the `maxFileBytes` setting, not on the file alone. Kept
# skips are dropped when the content checks change (workspace.CONTENT_CHECKS).
_KEPT_SKIPS = frozenset({"binary", "generated", "minified", "secret_content", TOO_MANY_CHUNKS})
_SKIP_RULES = f"content checks {CONTENT_CHECKS}"
# The rules that decide what a prepared file holds beyond its bytes (secret redaction, how it is
# split, the graph's reading): an index prepared under other rules prepares every file again once
# (load_kept).
_PREPARE_RULES = f"secrets {RULES_VERSION}; chunks {CHUNKS_VERSION}; graph {GRAPH_FORMAT}"


def load_kept(state: IndexState, manifest: Manifest) -> None:
    """What the manifest keeps besides records, read when the index opens: the content skips
    that still hold, and whether the files were prepared under today's rules."""
    state.known_skips = manifest.skipped(_SKIP_RULES)
    if manifest.get_meta("prepare_rules") != _PREPARE_RULES:
        # Made under other redaction rules: every file is prepared again (unchanged text
        # keeps its vector through the embedding cache); the mark is written once none is left.
        state.stale_prepare = set(manifest.all())
        if not state.stale_prepare:
            manifest.set_meta("prepare_rules", _PREPARE_RULES)


class IndexWriter:
    def __init__(self, state: IndexState, handle: IndexHandle, rules: IgnoreRules) -> None:
        self.state = state
        self.handle = handle
        self.rules = rules
        self.root: Path = handle.root
        self.settings: Settings = handle.settings

    def jobs_for(self, rels: list[str]) -> list[FileJob]:
        """The checks that need the index's state, in the indexer thread, before a file's
        content is prepared (here or in a worker process)."""
        st = self.state
        jobs: list[FileJob] = []
        real_dirs: dict[str, str] = {}
        for rel in rels:
            # A link created after discovery (e.g. by a checkout) must not reach outside the root.
            if link := link_skip(str(self.root), rel, self.rules, real_dirs):
                self.skip(rel, link)
                continue
            with st.lock:
                buffer = st.open_docs.get(rel)
            if buffer is not None and not self._indexable_buffer(rel):
                with st.lock:
                    st.pending.discard(rel)
                continue
            if buffer is None:
                try:
                    stat = (self.root / rel).stat()
                except OSError:
                    self.skip(rel, "vanished")
                    continue
                reason = (
                    classify(rel, self.rules, self.settings, stat)
                    if not self.rules.ignored_with_parents(rel)
                    else "ignored"
                )
                if reason:
                    self.skip(rel, reason)
                    continue
            language = language_of(rel)
            if language is None:
                self.skip(rel, "unsupported")
                continue
            old = st.records.get(rel)
            complete = is_complete(rel, old, buffer, st.missing_dense) and rel not in st.stale_prepare
            jobs.append(FileJob(rel, language, buffer, old.hash if complete and old else None))
        return jobs

    def _indexable_buffer(self, rel: str) -> bool:
        """An open editor buffer follows the same rules as the file on disk would."""
        return not (
            is_secret_file(rel)
            or self.rules.ignored_with_parents(rel)
            or not self.rules.included(rel)
            or language_of(rel) is None
        )

    def index_files(self, rels: list[str]) -> None:
        """Lexical phase for a batch of files, prepared in this thread."""
        s = self.settings
        self.apply([(j, prepare_file(str(self.root), j, s.indexing, s.max_file_bytes)) for j in self.jobs_for(rels)])

    def apply(self, done: list[tuple[FileJob, Prepared]]) -> None:
        """Store prepared files: sparse vectors (and cached dense vectors) now, the rest queued
        for dense backfill. Every store and manifest write of the lexical pass happens here."""
        st, h = self.state, self.handle
        assert h.store is not None and h.manifest is not None and h.cache is not None
        h.check_dir()
        new_points: list[PointData] = []
        plans: list[tuple[FileRecord, list[str], list[str]]] = []  # record, stale ids, no-dense ids
        graphs: dict[str, FileGraph | None] = {}  # committed with the records
        touched: list[FileRecord] = []
        skips: dict[str, SkippedFile] = {}
        for job, p in done:
            rel = p.rel
            if p.skip:
                self.skip(rel, p.skip)
                if p.skip in _KEPT_SKIPS and job.buffer is None and p.mtime_ns:
                    skips[rel] = SkippedFile(p.size, p.mtime_ns, p.skip)
                continue
            old = st.records.get(rel)
            if p.unchanged:
                with st.lock:
                    buffer = st.open_docs.get(rel)
                if old is not None and old.hash == p.digest and is_complete(rel, old, buffer, st.missing_dense):
                    old.size, old.mtime_ns = p.size, p.mtime_ns  # touched, not changed
                    touched.append(old)
                    with st.lock:
                        st.pending.discard(rel)
                continue  # else: changed meanwhile; it stays pending and is read again
            if p.error is not None:
                self.fail(rel, p.error)
                continue
            chunks = p.chunks or []
            ids = [c.id for c in chunks]
            old_ids = set(old.chunk_ids) if old else set()
            fresh = [c for c in chunks if c.id not in old_ids]
            cached = h.cached_vectors([c.text_hash for c in fresh]) if fresh else {}
            no_dense: list[str] = []
            for c in fresh:
                vec = cached.get(c.text_hash)
                if vec is None:
                    no_dense.append(c.id)
                new_points.append(PointData(c.id, c.sparse, c.payload, vec))
            id_set = set(ids)
            unembedded = st.missing_dense.get(rel, []) + st.dense_failed.get(rel, [])
            still_missing = [i for i in unembedded if i in id_set and i in old_ids]
            rec = FileRecord(rel, p.digest, p.size, p.mtime_ns, job.language, LEXICAL, ids, [c.id for c in fresh])
            plans.append((rec, sorted(old_ids - id_set), no_dense + still_missing))
            graphs[rel] = p.graph
        if skips:
            h.manifest.set_skipped(skips)
            st.known_skips.update(skips)
        if touched:
            h.manifest.put_many(touched)
        if plans:
            self.forget_skips([rec.path for rec, _, _ in plans])
            # Write-ahead: record pending ids, then write points, then commit the manifest.
            h.manifest.set_pending_many([(rec.path, rec.pending_ids) for rec, _, _ in plans])
            h.store.upsert(new_points)
            h.store.delete([i for _, stale, _ in plans for i in stale])
            h.wrote(len(new_points))
            for rec, _, missing in plans:
                rec.pending_ids = []
                rec.status = LEXICAL if missing else DENSE
            h.manifest.put_many([rec for rec, _, _ in plans], graphs)
            with st.lock:
                for rec, _, missing in plans:
                    st.records[rec.path] = rec
                    st.pending.discard(rec.path)
                    st.failed.pop(rec.path, None)
                    st.dense_failed.pop(rec.path, None)
                    st.skipped_paths.pop(rec.path, None)
                    if missing:
                        st.missing_dense[rec.path] = missing
                    else:
                        st.missing_dense.pop(rec.path, None)
            st.batches += 1
            h.maybe_flush()
        if st.stale_prepare:
            st.stale_prepare.difference_update(p.rel for _, p in done)
            st.stale_prepare.intersection_update(st.records)  # removed files need nothing
            if not st.stale_prepare:
                h.manifest.set_meta("prepare_rules", _PREPARE_RULES)

    def fail(self, rel: str, message: str) -> None:
        self.state.error(rel, message)
        with self.state.lock:
            self.state.failed[rel] = message
            self.state.pending.discard(rel)

    def remove(self, paths: list[str]) -> None:
        if not paths:
            return
        st, h = self.state, self.handle
        assert h.store is not None and h.manifest is not None
        ids = [i for p in paths if p in st.records for i in st.records[p].chunk_ids]
        # Write-ahead again: a crash between the two steps leaves "deleting" records, which
        # the next start finishes, instead of records pointing at missing chunks.
        h.manifest.set_status(paths, DELETING)
        h.store.delete(ids)
        h.generation += 1
        h.manifest.remove(paths)
        with st.lock:
            for p in paths:
                st.records.pop(p, None)
                st.missing_dense.pop(p, None)
                st.dense_failed.pop(p, None)

    def forget_skips(self, paths: list[str]) -> None:
        st = self.state
        gone = [p for p in paths if p in st.known_skips]
        if gone:
            assert self.handle.manifest is not None
            self.handle.manifest.forget_skipped(gone)
            for p in gone:
                del st.known_skips[p]

    def skip(self, rel: str, reason: str) -> None:
        st = self.state
        if reason not in _KEPT_SKIPS:
            self.forget_skips([rel])
        with st.lock:
            if reason == "vanished":
                st.skipped_paths.pop(rel, None)  # gone is not skipped: it no longer exists
            else:
                st.skipped_paths[rel] = reason
            st.pending.discard(rel)
            st.failed.pop(rel, None)
        if rel in st.records:
            self.remove([rel])


def reconcile(state: IndexState, handle: IndexHandle) -> None:
    """Make the manifest and the store agree after any crash: delete orphan points,
    re-queue files whose points are missing, and find chunks still lacking dense vectors."""
    store, manifest = handle.store, handle.manifest
    assert store is not None and manifest is not None
    recs: Records = state.records
    if all(not r.pending_ids and r.status in (LEXICAL, DENSE) for r in recs.values()) and (
        store.count() == recs.chunks
    ):
        # A clean stop (no write-ahead left, as many points as the manifest names): skip the
        # scroll over every point, seconds at 100k. Chunks of lexical files are queued
        # whole; those embedded before the stop come back from the embedding cache.
        with state.lock:
            for path, rec in recs.items():
                if rec.status == LEXICAL and rec.chunk_ids:
                    state.missing_dense[path] = list(rec.chunk_ids)
        return
    stored = store.all_ids()
    known: set[str] = set()
    broken: list[str] = []
    for path, rec in list(recs.items()):
        ids = set(rec.chunk_ids)
        known |= ids
        if rec.pending_ids or rec.status not in (LEXICAL, DENSE) or not ids <= stored.keys():
            # Interrupted mid-write: forget the version so the scan rewrites it.
            known |= set(rec.pending_ids)
            broken.append(path)
            continue
        missing = [i for i in rec.chunk_ids if not stored[i][1]]
        if missing:
            with state.lock:
                state.missing_dense[path] = missing
                if rec.status == DENSE:
                    recs.set_status(path, LEXICAL)
    orphans = [i for i in stored if i not in known]
    for path in broken:
        with state.lock:
            gone = recs.pop(path)
        assert gone is not None
        orphans.extend(i for i in gone.chunk_ids + gone.pending_ids if i in stored)
    if orphans:
        log.info("removing %d orphan chunks left by an interrupted run", len(orphans))
        store.delete(sorted(set(orphans)))
    if broken:
        manifest.remove(broken)
    lexical_only = [p for p in state.missing_dense if recs[p].status == LEXICAL]
    manifest.set_status(lexical_only, LEXICAL)
