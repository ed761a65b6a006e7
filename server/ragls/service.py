"""A folder's index inside the process that owns it: the indexer, the watcher, and the answers
every face gives from them (LSP `rag/*`, MCP tools, the owner socket, the CLI). One place for
status, retrieval and symbol lookup, so no face has a pipeline of its own."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ragls import __version__
from ragls.config import Settings
from ragls.context import ContextChunk, format_context
from ragls.embedding import EmbeddingError
from ragls.indexer import Indexer
from ragls.protocol import (
    CacheInfo,
    ChunkOut,
    EmbedderInfo,
    ErrorOut,
    IndexStatus,
    Position,
    Progress,
    Range,
    RetrieveParams,
    RetrieveResultOut,
    StoreInfo,
    SymbolParams,
)
from ragls.retrieval import Hit, compile_globs, is_test_path, retrieve
from ragls.watcher import Watcher

log = logging.getLogger(__name__)

LOCAL = "local"  # the document source of the owner process's own editor
_SYMBOL_SCAN = 512  # definitions read per lookup before ranking; names are rarely that common


def starting_status(root: Path | None, settings: Settings, message: str | None) -> IndexStatus:
    """The status before an index exists: starting, or an error when `message` says why not."""
    state, phase = ("error", "error") if message else ("indexing", "starting")
    return IndexStatus(
        state=state,
        phase=phase,
        files_total=0,
        files_indexed=0,
        files_failed=0,
        files_skipped=0,
        skipped_by_reason={},
        chunks=0,
        lexical=Progress(done=0, total=0),
        dense=Progress(done=0, total=0),
        last_indexed_at=None,
        embedder=EmbedderInfo(provider=settings.embedder.provider, model=settings.embedder.model, dimension=0),
        store=StoreInfo(kind="remote" if settings.qdrant.url else "edge", location=""),
        cache=CacheInfo(hits=0, misses=0, hit_rate=0.0),
        errors=[],
        workspace=str(root or ""),
        version=__version__,
        message=message,
    )


def chunk_out(root: Path, h: Hit) -> ChunkOut:
    return ChunkOut(
        uri=(root / h.path).as_uri(),
        path=h.path,
        range=Range(start=Position(line=h.start_line - 1, character=0), end=Position(line=h.end_line, character=0)),
        symbol=h.symbol,
        kind=h.kind,
        language=h.language,
        score=round(h.score, 6),
        content=h.content,
    )


class IndexService:
    def __init__(
        self,
        root: Path,
        settings: Settings,
        on_change: Callable[[], None] | None = None,
        store_wait: float = 0.0,
        after: threading.Event | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.settings_error: str | None = None  # a bad setting the face fell back from
        self.warnings = list(warnings or [])  # e.g. sensitive keys the workspace file may not set
        # `after`: the previous service's `closed`, so a restart reopens the same index slot.
        self.indexer = Indexer(self.root, settings, on_change=on_change, store_wait=store_wait, after=after)
        self.watcher: Watcher | None = None
        self._docs: dict[str, dict[str, str]] = {}  # path -> source -> text, latest source last
        self._docs_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self.indexer.start()
        if self.settings.indexing.watch:
            self.watcher = Watcher(
                self.root,
                self.indexer.rules,
                self.indexer.notify_changes,
                self.settings.indexing.debounce_ms,
                on_restart=self.indexer.request_scan,  # a restarted watch rescans what it missed
            )
            self.watcher.start()

    def stop(self, timeout: float = 1.5) -> threading.Event:
        """Stop the watcher and the indexer; the returned event is set once the store is closed
        (the worker closes it itself after its batch, never under a write)."""
        if self.watcher is not None:
            self.watcher.stop(wait=timeout >= 1)
            self.watcher = None
        self.indexer.stop(timeout)
        return self.indexer.closed

    @property
    def runs(self) -> int:
        return self.indexer.runs

    def busy(self) -> bool:
        return self.indexer.busy()

    def reindex(self, full: bool) -> bool:
        """Queue a scan; False when a run was already going (it re-runs once that ends)."""
        busy = self.indexer.busy()
        self.indexer.retry_now()  # waiting faults and a paused provider are tried again at once
        self.indexer.request_scan(full=full)
        return not busy

    # -- open buffers ------------------------------------------------------------------------
    def open_document(self, rel: str, text: str, source: str = LOCAL) -> None:
        """An editor buffer wins over the file on disk; with several editors, the latest edit."""
        with self._docs_lock:
            per = self._docs.setdefault(rel, {})
            per.pop(source, None)
            per[source] = text
        self.indexer.open_document(rel, text)

    def close_document(self, rel: str, source: str = LOCAL) -> None:
        with self._docs_lock:
            per = self._docs.get(rel, {})
            if per.pop(source, None) is None:
                return
            rest = list(per.values())
            if not rest:
                self._docs.pop(rel, None)
        if rest:
            self.indexer.open_document(rel, rest[-1])  # another editor still has it open
        else:
            self.indexer.close_document(rel)

    def close_source(self, source: str) -> None:
        """A client process went away: its buffers revert to disk (or another editor's text)."""
        with self._docs_lock:
            rels = [rel for rel, per in self._docs.items() if source in per]
        for rel in rels:
            self.close_document(rel, source)

    # -- status ------------------------------------------------------------------------------
    def status(self) -> IndexStatus:
        idx = self.indexer
        snap = idx.snapshot()
        emb = idx.embedder
        store = idx.store
        total_lookups = snap.cache_hits + snap.cache_misses
        indexable = snap.files_total - snap.files_failed if snap.files_total >= snap.files_failed else snap.files_total
        return IndexStatus(
            state=snap.state,  # type: ignore[arg-type]
            phase=snap.phase,
            files_total=snap.files_total,
            files_indexed=snap.files_indexed,
            files_failed=snap.files_failed,
            files_skipped=snap.files_skipped,
            skipped_by_reason=snap.skipped_by_reason,
            chunks=snap.chunks,
            lexical=Progress(done=snap.lexical_done, total=indexable),
            dense=Progress(done=snap.dense_done, total=indexable),
            last_indexed_at=snap.last_indexed_at,
            embedder=EmbedderInfo(
                provider=emb.provider if emb else self.settings.embedder.provider,
                model=emb.model_id if emb else self.settings.embedder.model,
                dimension=emb.dimension if emb else 0,
            ),
            store=StoreInfo(
                kind=store.kind if store else ("remote" if self.settings.qdrant.url else "edge"),
                location=store.location if store else "",
            ),
            cache=CacheInfo(
                hits=snap.cache_hits,
                misses=snap.cache_misses,
                hit_rate=round(snap.cache_hits / total_lookups, 4) if total_lookups else 0.0,
            ),
            embedded=snap.embeds,
            errors=[ErrorOut(path=e.path, message=e.message, time=e.time) for e in snap.errors],
            workspace=str(self.root),
            version=__version__,
            message=snap.message or self.settings_error or (self.watcher.problem if self.watcher else None),
            warnings=list(self.warnings),
            watching=self.watcher.watching if self.watcher else False,
        )

    # -- answers -----------------------------------------------------------------------------
    def _usable(self, wait: float) -> str | None:
        """None when the store can answer, else why not."""
        idx = self.indexer
        if not idx.ready.is_set():
            idx.ready.wait(wait)
        if idx.store is None or idx.fatal:
            return idx.fatal or "index is not available"
        return None

    def retrieve(self, p: RetrieveParams, wait: float = 30.0) -> RetrieveResultOut:
        """Ranked chunks and the <rag_context> block; `error` says when retrieval could not run
        or ran degraded (lexical only). Raises QueryError for bad globs."""
        spec = compile_globs(p.paths) if p.paths else None
        empty = RetrieveResultOut(context="", chunks=[], took_ms=0.0)
        if (why := self._usable(wait)) is not None:
            empty.error = why
            return empty
        idx = self.indexer
        assert idx.store is not None
        allowed = [path for path in idx.indexed_paths() if spec.match_file(path)] if spec is not None else None
        settings = self.settings.retrieval
        degraded: str | None = None
        if idx.breaker.is_open:
            # The provider is known to be down: do not make the user wait for its timeouts.
            settings = settings.model_copy(update={"mode": "lexical"})
            degraded = f"dense search paused, the embedding provider is down ({idx.breaker.last_error}); lexical only"
        try:
            res = retrieve(idx.store, idx.embedder, settings, p.query, p.top_k, p.max_chars, allowed, p.languages)
        except EmbeddingError as exc:
            # The embedding provider is down: lexical search still answers, and says so.
            log.warning("query embedding failed, answering from lexical search only: %s", exc)
            try:
                lexical = settings.model_copy(update={"mode": "lexical"})
                res = retrieve(idx.store, idx.embedder, lexical, p.query, p.top_k, p.max_chars, allowed, p.languages)
                degraded = f"dense search unavailable ({exc}); results are lexical only"
            except Exception as exc2:
                empty.error = f"retrieval failed: {exc2}"
                return empty
        except Exception as exc:  # the store can fail (remote down); chat must keep working
            log.error("retrieve failed: %s", exc)
            empty.error = f"retrieval failed: {exc}"
            return empty
        return RetrieveResultOut(
            error=degraded,
            context=res.context,
            took_ms=round(res.took_ms, 2),
            chunks=[chunk_out(self.root, h) for h in res.hits],
        )

    def find_symbol(self, p: SymbolParams, wait: float = 30.0) -> RetrieveResultOut:
        """Definitions whose stored symbol is `name` or ends with `.name` (`Invoice.total`,
        `total`; `::` and `#` count as dots), exact matches first, then non-test files."""
        t0 = time.perf_counter()
        empty = RetrieveResultOut(context="", chunks=[], took_ms=0.0)
        if (why := self._usable(wait)) is not None:
            empty.error = why
            return empty
        store = self.indexer.store
        assert store is not None
        wanted = re.sub(r"::|#", ".", p.name.strip()).strip(".")
        try:
            stored = store.by_symbol([wanted.lower()], _SYMBOL_SCAN)
        except Exception as exc:
            empty.error = f"symbol lookup failed: {exc}"
            return empty
        hits: list[tuple[tuple[int, int, str, int], Hit]] = []
        for s in stored:
            pl = s.payload
            symbol = str(pl.get("symbol") or "")
            kind = str(pl.get("kind", "text"))
            if p.kind and not (kind == p.kind or kind.startswith(p.kind + "_")):
                continue
            norm = re.sub(r"::|#", ".", symbol)
            exact = 0 if norm == wanted else 1 if norm.lower() == wanted.lower() else 2
            path = str(pl.get("path", ""))
            start = int(pl.get("start_line", 1))
            hit = Hit(
                path,
                start,
                int(pl.get("end_line", start)),
                symbol or None,
                kind,
                str(pl.get("language", "text")),
                1.0 if exact == 0 else 0.9 if exact == 1 else 0.8,
                str(pl.get("text", "")),
            )
            hits.append(((exact, int(is_test_path(path)), path, start), hit))
        hits.sort(key=lambda t: t[0])
        top = [h for _, h in hits[: p.top_k]]
        context = format_context(
            [ContextChunk(h.path, h.start_line, h.end_line, h.symbol, h.content) for h in top], p.max_chars
        )
        return RetrieveResultOut(
            context=context,
            chunks=[chunk_out(self.root, h) for h in top],
            took_ms=round((time.perf_counter() - t0) * 1000, 2),
        )
