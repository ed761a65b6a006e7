"""The open index's resources: the store, the manifest, the embedding cache and the embedder
(with the bundled model's load), the `embedder.snapshot` import, the provider's circuit
breaker and the git history. Queries read everything they need here (`query/answer.py`, `sharing/local_index.py`);
the worker writes through it.

Also the index folder's life: opened, closed, checked before every write batch (replaced under
us?), moved aside when it cannot be loaded, and flushed seldom (a flush stalls every request)."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.chunking.model import EMBED_FORMAT
from ragls.config import Settings, cache_root
from ragls.embedding import Embedder, EmbeddingError, local_identity, make_embedder, model_identity
from ragls.embedding.cache import Distrusted, EmbeddingCache, SnapshotVector
from ragls.embedding.snapshot import Identity
from ragls.embedding.snapshot_source import ImportReport, distrusted_message, import_snapshot
from ragls.git.history import HistoryTracker
from ragls.graph.source import GraphSource
from ragls.index import name_rerank
from ragls.index.source_lexicon import SourceLexicon
from ragls.index.view import FrozenView, Records
from ragls.store import Store, StoreError, manifest_path, open_index
from ragls.store.manifest import Manifest
from ragls.system import memory
from ragls.system.faults import CircuitBreaker
from ragls.system.threads import in_thread

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

# Store flushes bound the write-ahead log a restart replays after a crash (a clean stop flushes).
# A Qdrant Edge flush syncs every file of the shard (~80 msync/fsync calls) holding the GIL, a
# stall of every request: 150-260 ms on the disk of the bench machine whatever the number of
# points written since. So the indexer flushes seldom while it works: after _FLUSH_POINTS
# points (a crash then replays at most that many: 2.6 s for 90,000 points) or _FLUSH_AGE_S
# after the last flush, and once the index is complete. 200,000: a 150,000-chunk lexical pass
# no longer stops for a flush midway (status max 317 -> 34 ms, peak RSS +20 MB, make bench
# chunks150k).
_FLUSH_POINTS = 200_000
_FLUSH_AGE_S = 600.0
# Objects left alive by this many points' batches are frozen out of the garbage collector's
# walks (freeze_heap): a full collection of the unfrozen heap stalls every request.
_FREEZE_POINTS = 6_000


class ModelUnavailable(RuntimeError):
    """The bundled model did not load (a damaged install): lexical search goes on, the dense
    pass waits as a fault and tries again."""


class IndexReplaced(Exception):
    """The embedded index's folder is not the one that was opened any more."""


def inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


class IndexHandle:
    """One folder's open index, for the worker (which opens, writes and closes it) and for
    queries (which only read it)."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        embedder: Embedder | None,
        store_wait: float,
        report_error: Callable[[str, str], None],
        on_change: Callable[[], None],
        seek: Callable[[list[str]], None],
        published: Callable[[], Records | None],
    ) -> None:
        self.root = root
        self.settings = settings
        self._store_wait = store_wait  # the folder's owner waits for the primary index slot
        self._report_error = report_error  # (path, message) into the status's errors
        self._on_change = on_change
        # A question named these definitions: files that spell them go ahead in a running pass
        # (the worker's seek; returns at once).
        self.seek = seek
        # What the worker published last (index/state.py): a query's files and visible chunks.
        self._published = published
        self._embedder = embedder
        self._loading: Future[Embedder] | None = None  # the bundled model, loading (load_model)
        self._load_later = False  # the bundled model loads once the index is open
        self.model_error: str | None = None  # why the bundled model did not load
        self.store: Store | None = None
        self.manifest: Manifest | None = None
        self.cache: EmbeddingCache | None = None
        self.ready = threading.Event()  # set once the store is open (or failed); the model may still load
        self.fatal: str | None = None  # the index cannot open: why (status phase "error")
        self.notice: str | None = None  # shown in the status, e.g. a fallback store in use
        # The fault model (docs/reliability.md): the embedding provider has a circuit breaker so
        # a dead one is probed, not hammered.
        self.breaker = CircuitBreaker()
        # The workspace's git history, read by the first query and again when HEAD moves.
        self.git_history = HistoryTracker(root, settings.retrieval.git_history_commits)
        # Plain BM25 over the index's source code, for change requests (query.source_lexicon):
        # built by the first one, again after the index changed (`generation` counts writes).
        self.generation = 0
        self.source_lexicon = SourceLexicon(lambda: self.store, lambda: self.generation)
        # The code graph's rows in the manifest (ragls.graph), read per question.
        self.graph = GraphSource(lambda: m.path if (m := self.manifest) is not None else None)
        # `embedder.snapshot`: its import (a thread started by open, awaited by the dense pass)
        # and how many of this index's chunks took their vector from it.
        self.snapshot_import: ImportReport | None = None
        self._snapshot_job: Future[ImportReport] | None = None
        self.snapshot_reused = 0
        # Snapshots found lying (this index's check, another's, the import's), for the status.
        self.snapshot_warnings: list[str] = []
        self._index_key = ""  # this index in the cache's record of which index used which snapshot
        self._identity: tuple[str, int] | None = None  # (model id, dimension) of the open index
        self.index_dir: Path | None = None  # the embedded index's folder, watched for replacement
        self._index_ino: int | None = None
        self._flushed_at = time.monotonic()
        self._unflushed = 0  # points written or changed since the last flush
        self._frozen_at = 0  # ..., of which this many when the heap was last frozen

    @property
    def embedder(self) -> Embedder | None:
        """None until the bundled model has loaded (load_model starts it)."""
        loading = self._loading
        if self._embedder is None and loading is not None and loading.done() and loading.exception() is None:
            self._embedder = loading.result()
        return self._embedder

    # -- open and close ----------------------------------------------------------------------
    def open(self) -> None:
        """Open the store, the manifest and the embedding cache of this embedder's index, and
        start the snapshot import. The bundled model is not loaded here (load_model)."""
        nice = self.settings.indexing.nice
        identity = local_identity(self.settings.embedder) if self._embedder is None else None
        if identity is not None:
            model_id, dimension = identity
        else:
            if self._embedder is None:
                self._embedder = make_embedder(self.settings.embedder)
            model_id, dimension = self._embedder.model_id, self._embedder.dimension
        self._load_later = identity is not None
        self._identity = (model_id, dimension)  # the index's key, for quarantine
        self.store, manifest_path, self.notice = open_index(
            self.root, self.settings, model_id, dimension, self._store_wait
        )
        self.index_dir = manifest_path.parent if self.store.kind == "edge" else None
        self._index_ino = inode(self.index_dir) if self.index_dir else None
        if self.notice:
            log.warning("%s", self.notice)
        self.manifest = Manifest(manifest_path)
        self._index_key = str(manifest_path)
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

    def close(self) -> None:
        for closer in (self.store, self.manifest, self.cache):
            if closer is not None:
                with contextlib.suppress(Exception):  # closing twice or after a failure is harmless
                    closer.close()
        self.store = self.manifest = self.cache = None  # type: ignore[assignment]

    def quarantine(self, why: str) -> None:
        """Move an index that cannot be loaded aside (never ask the user to wipe by hand)."""
        assert self._identity is not None
        from ragls.store import index_dir

        d = index_dir(self.root, self.settings, *self._identity)
        aside = d.with_name(f"{d.name}.broken-{int(time.time())}")
        log.error("%s; moved it to %s and rebuilding", why, aside)
        self._report_error("", f"{why}; moved aside to {aside.name}, rebuilding the index")
        try:
            d.rename(aside)
        except OSError as exc:
            raise StoreError(f"{why}; and cannot move it aside: {exc}") from exc

    def replaced(self) -> bool:
        """Is the index folder not the one we opened any more (removed, or another in its place)?"""
        return self.index_dir is not None and inode(self.index_dir) != self._index_ino

    def check_dir(self) -> None:
        """Before every write batch: is the index folder still the one we opened?"""
        if self.replaced():
            raise IndexReplaced

    # -- flushes -----------------------------------------------------------------------------
    def wrote(self, points: int) -> None:
        """Count points written or changed since the last flush."""
        self._unflushed += points
        self.generation += 1

    def maybe_flush(self) -> None:
        """Flush the store after _FLUSH_POINTS points or _FLUSH_AGE_S seconds (a restart after a
        crash replays the write-ahead log written since; a flush stalls every request), and
        keep what the batches since left alive out of the garbage collector's walks."""
        if self._unflushed - self._frozen_at >= _FREEZE_POINTS:
            memory.freeze_heap()  # what the batches since left alive: records, ids
            self._frozen_at = self._unflushed
        if self._unflushed >= _FLUSH_POINTS or time.monotonic() - self._flushed_at > _FLUSH_AGE_S:
            self.flush()

    def release_memory(self, force: bool = False) -> None:
        """After a batch or an embedding call: freed heap and written store pages go back to the
        system (system/memory.py); rate-limited unless `force`."""
        memory.trim(force)
        if self.store is not None:
            self.store.release_pages(force)

    def flush(self) -> None:
        if self.store is not None:
            self.store.flush()
            self._flushed_at = time.monotonic()
            self._unflushed = self._frozen_at = 0

    # -- the embedder ------------------------------------------------------------------------
    def load_model(self) -> None:
        """The bundled model loads now, once the index is open, not beside the shard: it needs
        the GIL for much of its load, which the shard load holds, and nothing before the dense
        pass needs it (queries are answered lexically meanwhile, query/answer.py says so)."""
        if self._load_later:
            self._loading = in_thread(self.settings.indexing.nice, make_embedder, self.settings.embedder)
            self._loading.add_done_callback(self._model_loaded)

    def files(self) -> list[str]:
        """The indexed files as last published, for a query that names some (query/mentions.py)."""
        published = self._published()
        return list(published.paths) if published is not None else []

    def view(self) -> Store:
        """The store as a query should read it: only the chunks of the last published records
        (index/view.py), never a batch half-applied."""
        assert self.store is not None
        published = self._published()
        return self.store if published is None else FrozenView(self.store, published.records)  # type: ignore[return-value]

    def model_loading(self) -> bool:
        return self._loading is not None and not self._loading.done()

    def _model_loaded(self, loading: Future[Embedder]) -> None:
        exc = loading.exception()
        if exc is not None:  # lexical search goes on; the dense pass raises it again (a fault, retried)
            self.model_error = str(exc)
            self._report_error("", f"cannot load the embedding model: {exc}")
        self._on_change()  # `ready` (or the error) now: clients hear it at once, not at the next poll

    def model(self) -> Embedder:
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

    def wants_names(self) -> bool:
        """Whether the dense pass caches name vectors (name_rerank.usable), known without
        loading the model: the bundled model always gives them."""
        if self._embedder is not None:
            return name_rerank.usable(self._embedder, self.cache)
        return self.settings.embedder.provider == "local"

    # -- cached vectors ----------------------------------------------------------------------
    def await_snapshot(self) -> None:
        """The snapshot's vectors go into the cache before any lookup of the dense pass."""
        if self._snapshot_job is not None:
            self._snapshot_job.result()
            self._snapshot_job = None

    def warnings(self) -> list[str]:
        """For the status: each snapshot found lying, the configured one's import included."""
        out = list(self.snapshot_warnings)
        report = self.snapshot_import
        if report is not None and report.distrusted and report.message:
            out.insert(0, f"{report.source}: {report.message}")
        return list(dict.fromkeys(out))

    def cached_vectors(self, hashes: list[str]) -> dict[str, np.ndarray]:
        """The vectors this machine's model computed for these chunk texts (a snapshot's are taken
        by the dense pass only, after its check: snapshot_vectors). Where the dense pass caches
        name vectors, a vector cached without one (before name vectors existed) counts as
        missing, so it is embedded again with its name vector: queries never embed name vectors
        themselves."""
        assert self.cache is not None
        cached = self.cache.get_own(hashes)
        if cached and self.wants_names():
            named = self.cache.get_many([name_rerank.NAME_KEY + h for h in cached], count=False)
            cached = {h: v for h, v in cached.items() if name_rerank.NAME_KEY + h in named}
        return cached

    def snapshot_vectors(self, hashes: list[str]) -> tuple[dict[str, SnapshotVector], dict[str, np.ndarray]]:
        """What trusted snapshots hold for chunks this machine never embedded: their vectors and
        (where the dense pass caches them) name vectors; a vector without its name vector is left
        out, as in cached_vectors."""
        assert self.cache is not None
        found = self.cache.get_snapshot(hashes)
        names: dict[str, np.ndarray] = {}
        if found and self.wants_names():
            named = self.cache.get_many([name_rerank.NAME_KEY + h for h in found], count=False)
            names = {k[len(name_rerank.NAME_KEY) :]: v for k, v in named.items()}
            found = {h: v for h, v in found.items() if h in names}
        return found, names

    def took_snapshot_vectors(self, uses: dict[int, set[str]], taken: dict[int, int]) -> None:
        """These files took vectors from these snapshots (`taken`: how many chunks of each),
        recorded before the vectors are stored, so that a snapshot distrusted later, by any
        index, has these files embedded again."""
        assert self.cache is not None
        self.cache.record_uses(self._index_key, uses)
        report = self.snapshot_import
        if report is not None and report.snapshot is not None:
            self.snapshot_reused += taken.get(report.snapshot, 0)

    def distrust_snapshot(self, snapshot: int, reason: str) -> None:
        """This index's check found the snapshot lying: nothing of it is read from now on."""
        assert self.cache is not None
        if (found := self.cache.distrust(snapshot, reason)) is not None:
            self._distrusted(found)

    def distrusted_files(self) -> set[str]:
        """Files of this index whose vectors came from a snapshot distrusted since (by this index,
        another one or an import), to embed again; each such snapshot becomes a status warning."""
        assert self.cache is not None
        for found in self.cache.caught():
            self._distrusted(found)
        paths, snapshots = self.cache.distrusted_uses(self._index_key)
        for found in snapshots:
            self._distrusted(found)
        return paths

    def _distrusted(self, found: Distrusted) -> None:
        message = distrusted_message(found.reason)
        report = self.snapshot_import
        if report is not None and report.snapshot == found.snapshot:
            report.state, report.message, report.distrusted = "failed", message, True
            self.snapshot_reused = 0
        self._warn(f"{found.source}: {message}")

    def _warn(self, warning: str) -> None:
        if warning not in self.snapshot_warnings:
            log.warning("%s", warning)
            self.snapshot_warnings.append(warning)
            self._on_change()


def manifest_of(root: Path, settings: Settings | None = None) -> Path:
    """The manifest (graph rows included) of the folder's primary index, as `ragls index ROOT`
    made it with these settings (the folder's own `.ragls.toml` aside): for scripts that read
    the graph (`graph.relations.references_of`)."""
    s = settings or Settings()
    return manifest_path(root.resolve(), s, *model_identity(s.embedder))
