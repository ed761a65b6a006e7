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

from ragls.answer import answer, failed
from ragls.config import Settings
from ragls.context import ContextChunk, format_context
from ragls.index.worker import Indexer
from ragls.protocol import (
    IndexStatus,
    RetrieveParams,
    RetrieveResultOut,
    SymbolParams,
)
from ragls.retrieval import Hit, chunk_out, compile_globs, is_test_path
from ragls.status import build_status
from ragls.watcher import Watcher

log = logging.getLogger(__name__)

LOCAL = "local"  # the document source of the owner process's own editor
_SYMBOL_SCAN = 512  # definitions read per lookup before ranking; names are rarely that common


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
        # What queries read (store, embedder, cache, breaker, git history, seek): never the worker.
        self.index = self.indexer.handle
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
        return self.indexer.state.runs

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
        return build_status(
            self.root,
            self.settings,
            self.indexer.snapshot(),
            settings_error=self.settings_error,
            warnings=self.warnings,
            watcher=self.watcher,
        )

    # -- answers -----------------------------------------------------------------------------
    def _usable(self, wait: float) -> str | None:
        """None when the store can answer, else why not."""
        idx = self.index
        if not idx.ready.is_set():
            idx.ready.wait(wait)
        if idx.store is None or idx.fatal:
            return idx.fatal or "index is not available"
        return None

    def retrieve(self, p: RetrieveParams, wait: float = 30.0) -> RetrieveResultOut:
        """Ranked chunks and the <rag_context> block (answer.answer: `error` when retrieval could
        not run, `warnings` when it ran degraded). Raises QueryError for bad globs."""
        spec = compile_globs(p.paths) if p.paths else None
        if (why := self._usable(wait)) is not None:
            return failed(why)
        allowed = [path for path in self.indexer.state.paths() if spec.match_file(path)] if spec is not None else None
        rs = self.settings.retrieval
        top_k = p.top_k if "top_k" in p.model_fields_set else rs.top_k
        max_chars = p.max_chars if "max_chars" in p.model_fields_set else rs.max_chars
        return answer(self.index, rs, self.root, p.query, top_k, max_chars, allowed, p.languages, p.intent)

    def find_symbol(self, p: SymbolParams, wait: float = 30.0) -> RetrieveResultOut:
        """Definitions whose stored symbol is `name` or ends with `.name` (`Invoice.total`,
        `total`; `::` and `#` count as dots), exact matches first, then non-test files."""
        t0 = time.perf_counter()
        empty = RetrieveResultOut(context="", chunks=[], took_ms=0.0)
        if (why := self._usable(wait)) is not None:
            empty.error = why
            return empty
        store = self.index.store
        assert store is not None
        wanted = re.sub(r"::|#", ".", p.name.strip()).strip(".")
        self.index.seek([wanted])
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
