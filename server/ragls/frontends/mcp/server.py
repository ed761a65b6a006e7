"""`ragls mcp [PATH ...]`: the workspace's index as Model Context Protocol tools, over stdio.

Built on the official SDK's low-level server (`mcp` on PyPI) so each tool's input and output
schema is exactly the one documented in docs/agents.md (tools.py; their text in
text.py). Answers come from the same workspace object as the editor's (workspace/index.py):
every folder (the client's roots, else the PATHs, else the working directory) is owned by this
process or served by the ragls process that owns it (sharing/shared_index.py), several folders are
fused into one ranking, and retrieval, symbol lookup and status are sharing/local_index.py's, not a second
pipeline. Only protocol messages go to stdout; logs go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from ragls import __version__
from ragls.frontends.mcp.text import (
    FILE_HITS_PER_FILE,
    files_of,
    files_text,
    references_text,
    related_text,
    result_text,
    status_text,
    status_warnings,
    tool_error,
)
from ragls.frontends.mcp.tools import (
    INSTRUCTIONS,
    TOOLS,
    CodeResult,
    FeedbackArgs,
    FilesResult,
    FindFilesArgs,
    FindReferencesArgs,
    FindSymbolArgs,
    NoArgs,
    ReindexArgs,
    ReindexResult,
    RelatedArgs,
    RepoMapArgs,
    SearchCodeArgs,
    ToolArgs,
)
from ragls.protocol import (
    FeedbackLocation,
    FeedbackParams,
    IndexStatus,
    ReferencesParams,
    RelatedParams,
    RepoMapParams,
    RetrieveParams,
    RetrieveResultOut,
    SymbolParams,
)
from ragls.sharing.api import InvalidParams, validation_message
from ragls.status import indexing, progress_detail, progress_percentage, searchable
from ragls.text.escaping import label
from ragls.workspace.folders import uri_to_path
from ragls.workspace.index import WorkspaceIndex

log = logging.getLogger("ragls.mcp")

FIRST_INDEX_WAIT = 60.0  # a search during the first lexical pass waits this long (with progress)
REINDEX_WAIT = 120.0  # reindex reports progress until the run ends, or this long
_POLL = 0.5
_FAILED = ("index is not", "retrieval failed", "symbol lookup")  # an error that means no search ran


def _rate_line(result_id: str | None) -> str:
    """The answer's id in the text too: many agents read only the text of a result."""
    return f"\n(result_id {result_id}: rate this answer with the feedback tool)" if result_id else ""


def _root_from_uri(uri: str) -> Path | None:
    path = uri_to_path(uri)
    return path.resolve() if path is not None and path.is_dir() else None


class RaglsMcp:
    def __init__(self, default_roots: Path | list[Path]) -> None:
        roots = default_roots if isinstance(default_roots, list) else [default_roots]
        self.default_roots = [(r.resolve(), None) for r in roots]
        self.ws = WorkspaceIndex()
        self._opening: asyncio.Task[None] | None = None
        self._open_lock = asyncio.Lock()  # `initialized` and a roots change may race
        self.server: Server[Any] = Server(
            "ragls",
            version=__version__,
            title="ragls: search this project's code",
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )
        self.server.add_notification_handler("notifications/initialized", types.NotificationParams, self.on_initialized)
        self.server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self.on_roots_changed
        )

    # -- which folders -------------------------------------------------------------------------
    async def _client_roots(self, ctx: ServerRequestContext[Any]) -> list[tuple[Path, str | None]]:
        """The client's file:// roots, if it declares roots (deprecated in MCP 2026-07-28, still
        sent by editors on earlier protocol versions)."""
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None:
            return []
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = await asyncio.wait_for(ctx.session.list_roots(), 5)
        except Exception as exc:  # a client that cannot list roots still gets PATH
            log.warning("roots/list failed: %s", exc)
            return []
        return [(p, r.name) for r in result.roots if (p := _root_from_uri(str(r.uri))) is not None]

    async def _open(self, roots: list[tuple[Path, str | None]]) -> None:
        """The workspace becomes these folders: the others close, new ones open."""
        ws = self.ws
        wanted = {p for p, _ in roots}
        first = not ws.folders.items
        gone = [f.uri for f in ws.folders.items if f.path not in wanted]
        have = {f.path for f in ws.folders.items}
        added = [(p.as_uri(), name) for p, name in roots if p not in have]
        if first:
            for uri, name in added:
                ws.add(uri, name)
            ws.folders.renest()
            await asyncio.to_thread(ws.load_all_settings)
            await ws.start()
        else:
            await ws.change_folders(added, gone)
        log.info("workspace: %s", ", ".join(f"{f.path} ({f.role or 'nested'})" for f in ws.folders.items))

    def _start_opening(self, ctx: ServerRequestContext[Any] | None) -> None:
        async def run() -> None:
            roots = (await self._client_roots(ctx) if ctx is not None else []) or self.default_roots
            async with self._open_lock:
                await self._open(roots)

        self._opening = asyncio.get_running_loop().create_task(run())

    async def on_initialized(self, ctx: ServerRequestContext[Any], _params: Any) -> None:
        self._start_opening(ctx)

    async def on_roots_changed(self, ctx: ServerRequestContext[Any], _params: Any) -> None:
        self._start_opening(ctx)

    async def _ready(self) -> WorkspaceIndex:
        if self._opening is None:  # a client that skipped `initialized`
            self._start_opening(None)
        await asyncio.wait_for(self.ws.started.wait(), 60)
        return self.ws

    def _role(self) -> str | None:
        roles = set(self.ws.roles())
        return roles.pop() if len(roles) == 1 else None

    # -- handlers ----------------------------------------------------------------------------
    async def list_tools(self, _ctx: ServerRequestContext[Any], _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        handlers: dict[str, tuple[type[ToolArgs], Callable[..., Awaitable[types.CallToolResult]]]] = {
            "search_code": (SearchCodeArgs, self.search_code),
            "find_symbol": (FindSymbolArgs, self.find_symbol),
            "find_files": (FindFilesArgs, self.find_files),
            "find_references": (FindReferencesArgs, self.find_references),
            "related": (RelatedArgs, self.related),
            "repo_map": (RepoMapArgs, self.repo_map),
            "index_status": (NoArgs, self.index_status),
            "reindex": (ReindexArgs, self.reindex),
            "feedback": (FeedbackArgs, self.feedback),
        }
        entry = handlers.get(params.name)
        if entry is None:
            return tool_error(f"Unknown tool {params.name!r}; the tools are: {', '.join(handlers)}.")
        model, fn = entry
        try:
            args = model.model_validate(params.arguments or {})
        except ValidationError as exc:
            return tool_error(f"Invalid arguments for {params.name}: {validation_message(exc)}")
        try:
            return await fn(ctx, args)
        except InvalidParams as exc:
            return tool_error(f"Invalid arguments for {params.name}: {exc}")
        except Exception as exc:  # a failed call is an answer the model can read, never a crash
            log.exception("%s failed", params.name)
            return tool_error(f"{params.name} failed: {exc}")

    async def _progress_until(
        self, ctx: ServerRequestContext[Any], done: Callable[[IndexStatus], bool], limit: float
    ) -> IndexStatus:
        """Report indexing progress to the caller (if it sent a progress token) until `done`."""
        deadline = time.monotonic() + limit
        while True:
            st = (await self.ws.status()).status
            if done(st) or st.state == "error" or time.monotonic() >= deadline:
                return st
            await ctx.session.report_progress(min(progress_percentage(st), 99), 100, progress_detail(st))
            await asyncio.sleep(_POLL)

    async def _search(self, ctx: ServerRequestContext[Any], p: RetrieveParams) -> tuple[RetrieveResultOut, IndexStatus]:
        """Once every file is keyword-indexed (or FIRST_INDEX_WAIT passed, with progress)."""
        ws = await self._ready()
        ws.plan(p)  # bad globs and folder names are the caller's error, reported before any wait
        st = await self._progress_until(ctx, searchable, FIRST_INDEX_WAIT)
        return await ws.retrieve(p), st

    async def search_code(self, ctx: ServerRequestContext[Any], a: SearchCodeArgs) -> types.CallToolResult:
        p = RetrieveParams(
            query=a.query, top_k=a.top_k, max_chars=a.max_chars, paths=a.paths, languages=a.languages, folders=a.folders
        )
        res, st = await self._search(ctx, p)
        return self._code_result("results", a.query, res, st)

    async def find_files(self, ctx: ServerRequestContext[Any], a: FindFilesArgs) -> types.CallToolResult:
        p = RetrieveParams(
            query=a.change,
            top_k=min(100, a.top_k * FILE_HITS_PER_FILE),
            max_chars=0,
            paths=a.paths,
            languages=a.languages,
            folders=a.folders,
            intent="change",
        )
        res, st = await self._search(ctx, p)
        if res.error and not res.chunks and res.error.startswith(_FAILED):
            return tool_error(f"Search failed: {res.error}. Call index_status for details.")
        warnings = [*([res.error] if res.error else []), *res.warnings, *status_warnings(st)]
        out = FilesResult(
            files=files_of(res.chunks, a.top_k, self.ws.folders.multi), warnings=warnings, result_id=res.result_id
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=files_text(a.change, out) + _rate_line(res.result_id))],
            structured_content=out.model_dump(by_alias=True),
        )

    async def find_symbol(self, ctx: ServerRequestContext[Any], a: FindSymbolArgs) -> types.CallToolResult:
        ws = await self._ready()
        st = await self._progress_until(ctx, searchable, FIRST_INDEX_WAIT)
        res = await ws.find_symbol(SymbolParams(name=a.name, kind=a.kind, top_k=a.top_k, max_chars=20000))
        return self._code_result("definitions", a.name, res, st)

    # -- the code graph: the structured result is rag/references', rag/related', rag/repoMap's --
    async def _graph_ready(self, ctx: ServerRequestContext[Any]) -> WorkspaceIndex:
        """As a search: once every file is keyword-indexed (their graph rows come with them)."""
        ws = await self._ready()
        await self._progress_until(ctx, searchable, FIRST_INDEX_WAIT)
        return ws

    @staticmethod
    def _graph_result(text: str, res: Any) -> types.CallToolResult:
        """The text, and the LSP method's result as it is (one contract for both front ends)."""
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=res.model_dump(by_alias=True)
        )

    async def find_references(self, ctx: ServerRequestContext[Any], a: FindReferencesArgs) -> types.CallToolResult:
        ws = await self._graph_ready(ctx)
        res = await ws.references(ReferencesParams(symbol=a.symbol, path=a.path, limit=a.limit))
        if res.error:
            return tool_error(f"find_references failed: {res.error}. Call index_status for details.")
        return self._graph_result(references_text(a.symbol, res, ws.folders.multi), res)

    async def related(self, ctx: ServerRequestContext[Any], a: RelatedArgs) -> types.CallToolResult:
        try:
            p = RelatedParams(symbol=a.symbol, path=a.path, limit=a.limit)
        except ValidationError as exc:
            raise InvalidParams(validation_message(exc)) from exc
        ws = await self._graph_ready(ctx)
        res = await ws.related(p)
        if res.error:
            return tool_error(f"related failed: {res.error}. Call index_status for details.")
        return self._graph_result(related_text(a.symbol or a.path or "", res, ws.folders.multi), res)

    async def repo_map(self, ctx: ServerRequestContext[Any], a: RepoMapArgs) -> types.CallToolResult:
        ws = await self._graph_ready(ctx)
        res = await ws.repo_map(RepoMapParams(query=a.query, max_tokens=a.max_tokens))
        if res.error:
            return tool_error(f"repo_map failed: {res.error}. Call index_status for details.")
        head = "".join(f"Warning: {label(w)}\n" for w in res.warnings)
        return self._graph_result(head + (res.text or "No code in the index yet."), res)

    def _code_result(self, kind: str, subject: str, res: RetrieveResultOut, st: IndexStatus) -> types.CallToolResult:
        if res.error and not res.chunks and res.error.startswith(_FAILED):
            return tool_error(f"Search failed: {res.error}. Call index_status for details.")
        warnings = [*res.warnings, *status_warnings(st)]  # degraded results (e.g. keyword-only) first
        if res.error:
            warnings.insert(0, res.error)  # could not run (e.g. not ready)
        out = CodeResult(chunks=res.chunks, context=res.context, warnings=warnings, result_id=res.result_id)
        text = result_text(kind, subject, out, self.ws.folders.multi) + _rate_line(res.result_id)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=out.model_dump(by_alias=True),
        )

    async def feedback(self, _ctx: ServerRequestContext[Any], a: FeedbackArgs) -> types.CallToolResult:
        """rag/feedback's contract: the rating of an answer this session got (docs/feedback.md)."""
        ws = await self._ready()
        relevant = [FeedbackLocation(path=r.path, line=r.line) for r in a.relevant] if a.relevant else None
        res = await ws.feedback(
            FeedbackParams(result_id=a.result_id, rating=a.rating, relevant=relevant, comment=a.comment)
        )
        if res.stored:
            text = f"Rating stored for {', '.join(label(f) for f in res.folders)}."
        else:
            text = f"Rating not stored: {label(res.message or 'unknown reason')}."
        if res.stored and res.message:
            text += f" Warning: {label(res.message)}"
        return self._graph_result(text, res)

    async def index_status(self, _ctx: ServerRequestContext[Any], _a: NoArgs) -> types.CallToolResult:
        ws = await self._ready()
        st = (await ws.status()).status
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=status_text(st, self._role()))],
            structured_content=st.model_dump(by_alias=True),
        )

    async def reindex(self, ctx: ServerRequestContext[Any], a: ReindexArgs) -> types.CallToolResult:
        ws = await self._ready()
        started = await ws.reindex(a.full)
        await asyncio.sleep(0.2)  # let the worker pick the scan up before watching for the end
        st = await self._progress_until(ctx, lambda s: not indexing(s), REINDEX_WAIT)
        head = ("Re-index started." if started else "A run was already going; it re-runs when it ends.") + (
            " (full rebuild)" if a.full else ""
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=head + "\n" + status_text(st, self._role()))],
            structured_content=ReindexResult(started=started, status=st).model_dump(by_alias=True),
        )

    # -- running -------------------------------------------------------------------------------
    async def run(self) -> None:
        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    async def close(self) -> None:
        await asyncio.to_thread(self.ws.close, 1.0)


@contextlib.asynccontextmanager
async def _lifecycle(app: RaglsMcp) -> AsyncIterator[RaglsMcp]:
    try:
        yield app
    finally:
        await app.close()


def serve(paths: list[str] | str | None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("mcp", "httpx", "watchfiles"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    given = [paths] if isinstance(paths, str) else list(paths or [])
    roots = [Path(p).expanduser() for p in given] or [Path(os.getcwd())]
    for root in roots:
        if not root.is_dir():
            print(f"ragls: {root} is not a directory", file=sys.stderr)
            return 2
    app = RaglsMcp(roots)

    async def main() -> None:
        async with _lifecycle(app):
            await app.run()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    sys.stderr.flush()
    # Native indexing threads may be mid-batch; everything durable is on disk already.
    os._exit(0)
