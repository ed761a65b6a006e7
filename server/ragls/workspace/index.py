"""The workspace's index: one object for every front end (LSP, MCP, the CLI).

It holds the workspace's folders (workspace/folders.py), each with its settings and its `SharedIndex`, and
answers the index API for the whole workspace: the status (totals plus one entry per folder),
retrieval (each searched folder asked concurrently, the answers fused into one ranking), symbol
lookup, reindex and editor buffers (routed to the folder holding the file). It decides the
defaults of a multi-folder answer (the first folder's `retrieval` settings) and readiness: a
question waits for an index that is still opening instead of answering empty, and one asked
before any index of the folders exists answers at once that nothing is searchable yet. Every
front end therefore gets multi-root workspaces, the same answers and the same waits; it only
adds its own transport (pygls, the MCP SDK, the terminal) and its own settings layers.

Async: its methods run on the front end's event loop and move blocking work to threads. It
imports only light modules at start-up (the language server answers `initialize` before
pydantic loads); the rest loads where first used.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls.system.foreground import FOREGROUND
from ragls.workspace.folder import NOTHING_YET, Folder
from ragls.workspace.folders import UnknownFolder
from ragls.workspace.open_folders import WorkspaceFolders

if TYPE_CHECKING:
    from ragls.protocol import (
        FeedbackParams,
        FeedbackResult,
        ReferencesParams,
        ReferencesResult,
        RelatedParams,
        RelatedResult,
        RepoMapParams,
        RepoMapResult,
        RetrieveParams,
        RetrieveResultOut,
        StatusEnvelope,
        SymbolParams,
    )
    from ragls.sharing.api import Method
    from ragls.workspace.feedback_desk import FeedbackDesk

log = logging.getLogger("ragls")


class WorkspaceIndex(WorkspaceFolders):
    """The workspace's folders (WorkspaceFolders) and the index API over all of them."""

    # -- the index API over the workspace ----------------------------------------------------
    async def status(self, foreground: bool = True, at_rest: bool = False) -> StatusEnvelope:
        """The workspace's status (totals and one entry per folder) and the count of index runs.
        `foreground`: a question, answered before the indexer's next store write (system/foreground.py);
        not the progress reporter's polls. `at_rest`: folders not opened here answer with their
        owner's status or the index on disk (`ragls status`; Folder.status)."""
        from ragls.protocol import FolderStatus, IndexStatus, StatusEnvelope
        from ragls.status import folder_entry, starting_status, workspace_status

        with FOREGROUND.request() if foreground else contextlib.nullcontext():
            if not self.folders.items:
                return StatusEnvelope(status=starting_status(None, self.settings, self.settings_error), runs=0)
            # The folders as they are now: a folder change (MCP roots, the LSP's) may land meanwhile.
            folders = [(f, f.nested_in) for f in self.folders.items]
            indexed = [f for f, nested_in in folders if nested_in is None]
            results = await asyncio.gather(*(f.status(at_rest) for f in indexed))
        own = {f.name: env.status for f, env in zip(indexed, results, strict=True)}
        parts: list[tuple[FolderStatus, IndexStatus | None]] = []
        for f, nested_in in folders:
            if nested_in is None:
                parts.append((folder_entry(f.name, f.uri, f.path, own[f.name]), own[f.name]))
            else:
                parts.append((folder_entry(f.name, f.uri, f.path, own[nested_in], nested_in), None))
        return StatusEnvelope(status=workspace_status(parts), runs=sum(env.runs for env in results))

    def plan(self, p: RetrieveParams) -> list[tuple[Folder, list[str] | None]]:
        """Which folders a request searches, each with its globs; InvalidParams for bad globs or
        folder names, before any waiting."""
        from ragls.sharing.api import InvalidParams

        if p.paths:
            from ragls.query.retrieval import QueryError, compile_globs

            try:
                compile_globs(p.paths)
            except QueryError as exc:
                raise InvalidParams(str(exc)) from exc
        try:
            return self.folders.plan(p.folders, p.paths)
        except UnknownFolder as exc:
            raise InvalidParams(str(exc)) from exc

    async def retrieve(self, p: RetrieveParams) -> RetrieveResultOut:
        """Search the requested folders concurrently; one folder answers as itself, several are
        fused into one ranking (answer.fuse); the answer remembered for `rag/feedback` (its
        `resultId`). Raises InvalidParams."""
        plan = self.plan(p)
        res = await self._retrieve(p, plan)
        return self._remember(res, "rag/retrieve", p.query, [(f, p, g) for f, g in plan])

    async def _retrieve(self, p: RetrieveParams, plan: list[tuple[Folder, list[str] | None]]) -> RetrieveResultOut:
        from ragls.protocol import RetrieveResultOut, unanswered

        with FOREGROUND.request():
            # As the workspace is now: a folder change may land while this waits.
            empty, multi, rs = not self.folders.items, self.folders.multi, self.settings.retrieval
            if (early := await self._before_start(plan)) is not None:
                return early
            await self._loaded("ragls.query.answer", "ragls.sharing.api")
            from ragls.query.answer import fuse
            from ragls.sharing.api import RETRIEVE, budget

            if empty:
                return unanswered(RetrieveResultOut, self.settings_error or "no workspace folder to search")
            if not plan:
                return RetrieveResultOut(context="", chunks=[], took_ms=0.0)
            if not multi:
                ((f, _globs),) = plan
                return await self._ask(f, RETRIEVE, p)

            top_k, max_chars = budget(p, rs)
            # Each folder is asked for the whole topK; the context is built again after fusion,
            # from the fused chunks and the graph's signatures of the folders' contexts.
            answers = await asyncio.gather(
                *(
                    self._ask(
                        f,
                        RETRIEVE,
                        p.model_copy(update={"paths": g, "folders": None, "top_k": top_k, "max_chars": max_chars}),
                    )
                    for f, g in plan
                )
            )
            parts = [(f.name, f.uri, res) for (f, _), res in zip(plan, answers, strict=True)]
            return fuse(parts, p.query, top_k, max_chars, rs.symbol_boost)

    async def find_symbol(self, p: SymbolParams) -> RetrieveResultOut:
        """Definitions by name in every indexed folder; several folders' are fused as retrieval's;
        the answer remembered for `rag/feedback`."""
        res = await self._find_symbol(p)
        return self._remember(res, "rag/findSymbol", p.name, [(f, p, None) for f in self.folders.indexed])

    async def _find_symbol(self, p: SymbolParams) -> RetrieveResultOut:
        from ragls.protocol import RetrieveResultOut, unanswered

        with FOREGROUND.request():
            folders = self.folders.indexed
            if (early := await self._before_start([(f, None) for f in folders])) is not None:
                return early
            await self._loaded("ragls.query.answer", "ragls.sharing.api")
            from ragls.query.answer import fuse
            from ragls.sharing.api import FIND_SYMBOL

            if not folders:
                return unanswered(RetrieveResultOut, self.settings_error or "no workspace folder to search")
            if len(folders) == 1:
                return await self._ask(folders[0], FIND_SYMBOL, p)
            answers = await asyncio.gather(*(self._ask(f, FIND_SYMBOL, p) for f in folders))
            parts = [(f.name, f.uri, res) for f, res in zip(folders, answers, strict=True)]
            return fuse(parts, p.name, p.top_k, p.max_chars)

    # -- feedback (ragls.feedback): answers remembered, ratings stored ---------------------------
    @cached_property
    def desk(self) -> FeedbackDesk:
        from ragls.workspace.feedback_desk import FeedbackDesk

        return FeedbackDesk(self)

    def _remember(
        self, res: RetrieveResultOut, method: Any, query: str, asked: list[tuple[Folder, Any, list[str] | None]]
    ) -> RetrieveResultOut:
        return self.desk.remember(res, method, query, asked)

    async def feedback(self, p: FeedbackParams) -> FeedbackResult:
        """Store a rating of one of this process's answers (workspace/feedback_desk.py)."""
        return await self.desk.rate(p)

    async def _before_start(self, plan: list[tuple[Folder, list[str] | None]]) -> RetrieveResultOut | None:
        """Before indexing started: an empty answer at once when every folder asked is indexed
        for the first time (until its first files are stored nothing can be found, so waiting
        for the new index to open would only delay the same empty answer); else wait for the
        start (the front end is still reading the client's settings) rather than answer empty."""
        if not plan or all(f.shared is not None for f, _ in plan) or self.started.is_set():
            return None
        await self._loaded("ragls.protocol", "ragls.store")
        from ragls.protocol import RetrieveResultOut, unanswered

        folders = [f for f, _ in plan]
        new = all([await f.new_here() for f in folders])
        if new and not any(f.settings_error for f in folders):
            return unanswered(RetrieveResultOut, NOTHING_YET, notice=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.started.wait(), 10)
        return None

    async def _ask(self, f: Folder, method: Method, p: Any) -> RetrieveResultOut:
        """One folder's answer (`retrieve` or `find_symbol`), its chunks labelled with the folder."""
        res: RetrieveResultOut = await f.ask(method, p, "retrieval")
        for c in res.chunks:  # the client's name for the folder
            c.folder, c.folder_uri = f.name, f.uri
        return res

    # -- the code graph (ragls.graph) ---------------------------------------------------------
    async def references(self, p: ReferencesParams) -> ReferencesResult:
        """The uses of a definition in every folder asked (folders.route), in workspace order;
        several folders' are joined and cut to `limit`. Raises InvalidParams for a bad path."""
        from ragls.sharing.api import REFERENCES

        answers = await self._graph(p.path, REFERENCES, p)
        if not isinstance(answers, list):
            return answers  # type: ignore[no-any-return]
        from ragls.graph import merge

        return merge.references(answers, p.limit, self.folders.multi)

    async def related(self, p: RelatedParams) -> RelatedResult:
        """A definition's (or file's) neighbours in every folder asked, each list joined in
        workspace order (a folder resolves names within itself) and cut to `limit`."""
        from ragls.sharing.api import RELATED

        answers = await self._graph(p.path, RELATED, p)
        if not isinstance(answers, list):
            return answers  # type: ignore[no-any-return]
        from ragls.graph import merge

        return merge.related(answers, p.limit, self.folders.multi)

    async def repo_map(self, p: RepoMapParams) -> RepoMapResult:
        """Each folder's map for the whole budget, merged (graph/merge.py)."""
        from ragls.sharing.api import REPO_MAP

        answers = await self._graph(None, REPO_MAP, p)
        if not isinstance(answers, list):
            return answers  # type: ignore[no-any-return]
        from ragls.graph import merge

        return merge.repo_map(answers, p.max_tokens, self.folders.multi)

    async def _graph(self, path: str | None, method: Method, p: Any) -> Any:
        """Each routed folder's answer to a graph question, as (folder, result) pairs; or one
        unanswered result when nothing can be asked (no folder, nothing indexed yet: a notice)."""
        from ragls.protocol import unanswered

        with FOREGROUND.request():
            plan = self.folders.route(path)
            if not plan:
                return unanswered(method.result, self.settings_error or "no workspace folder to search")  # type: ignore[type-var]
            if await self._before_start([(f, None) for f, _ in plan]) is not None:
                return unanswered(method.result, NOTHING_YET, notice=True)  # type: ignore[type-var]
            asked = [
                (f, p.model_copy(update={"path": rel}) if "path" in type(p).model_fields else p) for f, rel in plan
            ]
            answers = await asyncio.gather(*(f.ask(method, q) for f, q in asked))
            return [(f, res) for (f, _), res in zip(asked, answers, strict=True)]

    async def reindex(self, full: bool = False) -> bool:
        """Re-scan every indexed folder (or rebuild); folders not open yet are opened, which
        starts their first run. InvalidParams when there is no folder to index."""
        from ragls.sharing.api import InvalidParams

        if not any(f.path.is_dir() for f in self.folders.indexed):
            raise InvalidParams("no workspace folder to index")
        indexes = [f.shared for f in self.folders.indexed if f.shared is not None]
        fresh = len(indexes) < len(self.folders.indexed)
        if fresh:  # e.g. autoIndex off
            await self.start()
        started = await asyncio.gather(*(asyncio.to_thread(index.reindex, full) for index in indexes))
        return fresh or any(started)

    def open_document(self, path: Path, text: str) -> None:
        """An editor buffer of a file in the workspace (non-blocking)."""
        found = self.folders.owner_of(path)
        if found is not None and found[0].shared is not None:
            found[0].shared.open_document(found[1], text)

    def close_document(self, path: Path) -> None:
        found = self.folders.owner_of(path)
        if found is not None and found[0].shared is not None:
            found[0].shared.close_document(found[1])
