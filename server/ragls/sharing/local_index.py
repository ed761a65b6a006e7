"""A folder's index in the process that runs it: the indexer, the watcher, and the answers of the
index API (sharing/api.py) from them. Every front end's status, retrieval and symbol lookup come from
here, in this process or, for a client process, through the owner socket: no face has a
pipeline of its own."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ragls import __version__
from ragls.config import Settings
from ragls.graph import outline
from ragls.graph.relations import Graph, split_symbol
from ragls.graph.repo_map import repo_map
from ragls.index.worker import Indexer
from ragls.ingest.watcher import Watcher
from ragls.protocol import (
    DocumentParams,
    Empty,
    OwnerHello,
    ReferencesParams,
    ReferencesResult,
    ReindexParams,
    ReindexResult,
    RelatedParams,
    RelatedResult,
    RepoMapParams,
    RepoMapResult,
    RetrieveParams,
    RetrieveResultOut,
    StatusEnvelope,
    SymbolParams,
    unanswered,
)
from ragls.query.answer import UNAVAILABLE, answer, chunk_out
from ragls.query.context import ContextChunk, format_context
from ragls.query.retrieval import Hit, QueryError, compile_globs
from ragls.sharing.api import (
    CLOSE_DOCUMENT,
    FIND_SYMBOL,
    HELLO,
    LOCAL,
    OPEN_DOCUMENT,
    REFERENCES,
    REINDEX,
    RELATED,
    REPO_MAP,
    RETRIEVE,
    STATUS,
    IndexApi,
    InvalidParams,
    Method,
    budget,
    safe_rel,
)
from ragls.sharing.buffers import Buffers
from ragls.status import build_status
from ragls.text.path_kinds import is_test_path

log = logging.getLogger(__name__)

_G = TypeVar("_G", ReferencesResult, RelatedResult)  # a graph answer: warnings and error
_T = TypeVar("_T")
_SYMBOL_SCAN = 512  # definitions read per lookup before ranking; names are rarely that common
_MAP_SEEDS = 20  # chunks retrieved for a repo map's question: their files are what it is about
_MAP_SEED_FILES = 10  # ...the first files of them, weighted 1, 1/4, 1/9, ... by their order


class Unavailable(Exception):
    """This index cannot answer the question now (its store did not open, a lookup failed):
    the method's answer says why (`call`)."""


class LocalIndex(IndexApi):
    def __init__(
        self,
        root: Path,
        settings: Settings,
        buffers: Buffers | None = None,
        on_change: Callable[[], None] | None = None,
        store_wait: float = 0.0,
        after: threading.Event | None = None,
        warnings: list[str] | None = None,
        settings_error: str | None = None,
    ) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.settings_error = settings_error  # a bad setting the front end fell back from
        self.warnings = list(warnings or [])  # e.g. sensitive keys the workspace file may not set
        # `after`: the previous index's `closed`, so a restart reopens the same index slot.
        self.indexer = Indexer(self.root, settings, on_change=on_change, store_wait=store_wait, after=after)
        # What queries read (store, embedder, cache, breaker, git history, seek): never the worker.
        self.handle = self.indexer.handle
        self.watcher: Watcher | None = None
        self.buffers = buffers if buffers is not None else Buffers()
        self._sent: dict[str, str] = {}  # the buffer text last given to the indexer, per file
        self._sent_lock = threading.Lock()
        self._handlers: dict[Method, Callable[[BaseModel, str], BaseModel]] = {
            HELLO: self._hello,
            STATUS: self._status,
            RETRIEVE: self._retrieve,
            FIND_SYMBOL: self._find_symbol,
            REFERENCES: self._references,
            RELATED: self._related,
            REPO_MAP: self._repo_map,
            REINDEX: self._reindex,
            OPEN_DOCUMENT: self._open_document,
            CLOSE_DOCUMENT: self._close_document,
        }

    def call(self, method: Method, params: BaseModel, source: str = LOCAL) -> BaseModel:
        try:
            return self._handlers[method](params, source)
        except Unavailable as exc:  # the one place an index's failure becomes an answer
            return unanswered(method.result, str(exc))  # type: ignore[type-var]

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self.indexer.start()
        for rel in self.buffers.paths():  # buffers opened before this index (a takeover, a restart)
            self._refresh(rel)
        if self.settings.indexing.watch:
            self.watcher = Watcher(
                self.root,
                self.indexer.rules,
                self.indexer.notify_changes,
                self.settings.indexing.debounce_ms,
                on_restart=self.indexer.request_scan,  # a restarted watch rescans what it missed
            )
            # The first scan does not wait for the watch to be set up (0.2-0.4 s: its process
            # starts, then adds the folder's watches; the first results would come that much
            # later): a file changed in between, after the walk saw it, is found by the next
            # scan, as when the watch ran in this process (141-168 ms at 10,000 files).
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
    def ready(self) -> bool:
        """The store is open (or failed to open): questions are answered at once."""
        return self.handle.ready.is_set()

    @property
    def runs(self) -> int:
        return self.indexer.state.runs

    def close_source(self, source: str) -> None:
        """A client process went away: its buffers revert to disk (or another editor's text)."""
        for rel in self.buffers.drop(source):
            self._refresh(rel)

    # -- the API -----------------------------------------------------------------------------
    def _hello(self, _p: BaseModel, _source: str) -> OwnerHello:
        return OwnerHello(workspace=str(self.root), version=__version__, pid=os.getpid())

    def _status(self, _p: BaseModel, _source: str) -> StatusEnvelope:
        st = build_status(
            self.root,
            self.settings,
            self.indexer.snapshot(),
            settings_error=self.settings_error,
            warnings=self.warnings,
            watcher=self.watcher,
        )
        return StatusEnvelope(status=st, runs=self.runs)

    def _reindex(self, p: BaseModel, _source: str) -> ReindexResult:
        """Queue a scan; `started` false when a run was already going (it re-runs once that ends)."""
        assert isinstance(p, ReindexParams)
        busy = self.indexer.busy()
        self.indexer.retry_now()  # waiting faults and a paused provider are tried again at once
        self.indexer.request_scan(full=p.full)
        return ReindexResult(started=not busy)

    def _open_document(self, p: BaseModel, source: str) -> Empty:
        """An editor buffer wins over the file on disk; with several editors, the latest edit."""
        assert isinstance(p, DocumentParams)
        if p.text is None:
            raise InvalidParams("text: Field required")
        rel = safe_rel(p.path)
        self.buffers.open(rel, p.text, source)
        self._refresh(rel)
        return Empty()

    def _close_document(self, p: BaseModel, source: str) -> Empty:
        assert isinstance(p, DocumentParams)
        rel = safe_rel(p.path)
        self.buffers.close(rel, source)
        self._refresh(rel)
        return Empty()

    def _refresh(self, rel: str) -> None:
        """Give the indexer the text that wins for `rel` now, if that changed."""
        with self._sent_lock:  # two editors at once: the indexer hears the winners in order
            text = self.buffers.winner(rel)
            if self._sent.get(rel) == text:
                return
            if text is None:
                self._sent.pop(rel, None)
            else:
                self._sent[rel] = text
            self.indexer.set_buffer(rel, text)

    def _usable(self, wait: float) -> None:
        """Return once the store can answer (waiting for it to open); Unavailable says why not.
        A client process's question reaches here directly: the owner may still be opening."""
        idx = self.handle
        if not idx.ready.is_set():
            idx.ready.wait(wait)
        if idx.store is None or idx.fatal:
            raise Unavailable(idx.fatal or UNAVAILABLE)

    def _retrieve(self, p: BaseModel, _source: str, wait: float = 30.0) -> RetrieveResultOut:
        """Ranked chunks and the <rag_context> block (answer.answer: `error` when retrieval could
        not run, `warnings` when it ran degraded). Raises InvalidParams for bad globs."""
        assert isinstance(p, RetrieveParams)
        try:
            spec = compile_globs(p.paths) if p.paths else None
        except QueryError as exc:
            raise InvalidParams(str(exc)) from exc
        self._usable(wait)
        allowed = [path for path in self.handle.files() if spec.match_file(path)] if spec is not None else None
        rs = self.settings.retrieval
        top_k, max_chars = budget(p, rs)
        return answer(
            self.handle, rs, self.root, p.query, top_k, max_chars, allowed, p.languages, p.intent, self._tuned_ranker()
        )

    def _tuned_ranker(self) -> str | None:
        """The folder's tuned model (`ragls feedback --tune`) when the user turned it on
        (`feedback.tunedRanker`) and one exists; looked up per request, so a tuning or an erase
        takes effect without a restart."""
        if not self.settings.feedback.tuned_ranker:
            return None
        from ragls.feedback.store import tuned_file

        path = tuned_file(self.root)
        return str(path) if path.is_file() else None

    def _find_symbol(self, p: BaseModel, _source: str, wait: float = 30.0) -> RetrieveResultOut:
        """Definitions whose stored symbol is `name` or ends with `.name` (`Invoice.total`,
        `total`; `::` and `#` count as dots), exact matches first, then non-test files."""
        assert isinstance(p, SymbolParams)
        t0 = time.perf_counter()
        self._usable(wait)
        store = self.handle.view()
        wanted = re.sub(r"::|#", ".", p.name.strip()).strip(".")
        self.handle.seek([wanted])
        try:
            stored = store.by_symbol([wanted.lower()], _SYMBOL_SCAN)
        except Exception as exc:
            raise Unavailable(f"symbol lookup failed: {exc}") from exc
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

    # -- the code graph (ragls.graph) --------------------------------------------------------
    def _graph_warnings(self) -> list[str]:
        """What makes a graph answer incomplete: files not indexed yet (their rows are missing)."""
        waiting = self.indexer.counters().waiting
        if waiting:
            return [f"the index is still being built ({waiting} files waiting): results may be incomplete"]
        return []

    def _graph_answer(self, wait: float, symbol: str | None, ask: Callable[[Graph], _G]) -> _G:
        """One graph question once the index is usable: `ask` over the graph's rows, the
        still-indexing warning first."""
        self._usable(wait)
        if symbol:
            self.handle.seek([split_symbol(symbol)[0]])  # files spelling the name go first in a running pass
        out = self._read_graph(ask)
        out.warnings[:0] = self._graph_warnings()
        return out

    def _read_graph(self, ask: Callable[[Graph], _T]) -> _T:
        try:
            with self.handle.graph.open() as g:
                return ask(g)
        except (LookupError, sqlite3.Error) as exc:
            raise Unavailable(f"graph lookup failed: {exc}") from exc

    def _references(self, p: BaseModel, _source: str, wait: float = 30.0) -> ReferencesResult:
        """The uses of a definition, resolved by name and import scope (graph/relations.py)."""
        assert isinstance(p, ReferencesParams)
        path = safe_rel(p.path) if p.path else None
        return self._graph_answer(wait, p.symbol, lambda g: g.references(p.symbol, path, p.limit))

    def _related(self, p: BaseModel, _source: str, wait: float = 30.0) -> RelatedResult:
        """A definition's (or a file's) definitions, callers, callees, imports and importers."""
        assert isinstance(p, RelatedParams)
        path = safe_rel(p.path) if p.path else None
        symbol = p.symbol.strip() if p.symbol else None
        return self._graph_answer(wait, symbol, lambda g: g.related(symbol, path, p.limit))

    def _repo_map(self, p: BaseModel, _source: str, wait: float = 30.0) -> RepoMapResult:
        """The ranked outline (graph/repo_map.py), personalised towards the files that retrieval
        finds for `query`."""
        assert isinstance(p, RepoMapParams)
        self._usable(wait)
        seeds: dict[str, float] = {}
        warnings = self._graph_warnings()
        if p.query and p.query.strip():
            found = answer(self.handle, self.settings.retrieval, self.root, p.query, _MAP_SEEDS, 0)
            files = list(dict.fromkeys(c.path for c in found.chunks))[:_MAP_SEED_FILES]
            # Squared: in a small project the chunks asked for cover most files, and only the
            # first few are what the question is about.
            seeds = {path: 1.0 / (i + 1) ** 2 for i, path in enumerate(files)}
            warnings += found.warnings + ([found.error] if found.error else [])
        files = self._read_graph(lambda g: repo_map(g.reader, g.resolver.paths, seeds, p.query, p.max_tokens))
        text = outline.render(files)
        return RepoMapResult(text=text, files=files, tokens=outline.tokens(text), warnings=warnings)
