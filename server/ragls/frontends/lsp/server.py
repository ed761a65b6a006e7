"""The LSP front end of ragls: pygls lifecycle and the rag/* handlers over the workspace's index
(workspace/index.py: folders, settings, status, retrieval); progress reports in progress.py.
No pipeline logic here."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from ragls import PROTOCOL_VERSION, __version__
from ragls.system import stdio
from ragls.system.foreground import FOREGROUND
from ragls.workspace.folders import Folders, uri_to_path
from ragls.workspace.index import WorkspaceIndex
from ragls.workspace.open_folders import NO_FOLDER

# Start-up: `initialize` is answered with pygls and the modules above only. Settings (pydantic),
# the protocol models, the index and retrieval (numpy, tree-sitter, the store, the model) are
# imported where first used, once the client has its answer.
log = logging.getLogger("ragls")

# What indexing and retrieval import (settings, protocol models, the pipeline, numpy): loaded in a
# thread once `initialize` is answered, while the client sends `initialized` and its settings.
# The status models first: a client asks for rag/indexStatus right after `initialized`; then
# what a request's handler needs; then the pipeline. Between two imports the thread waits while
# a request is being answered: an import holds the GIL for most of its time, and a question
# asked in the first ~0.3 s otherwise waited for all of them (216 ms at files10k).
_PRELOAD = ("ragls.status", "ragls.sharing.api", "ragls.store", "ragls.sharing.shared_index", "ragls.query.answer")
_PRELOAD_YIELD_S = 0.5  # the longest the preload waits for one request


# Set once the status models are imported (or failed to): until then rag/indexStatus answers
# the `starting` status as plain JSON (frontends/lsp/early_status.py) instead of waiting for them.
_status_loaded = threading.Event()
_preloaded = threading.Event()  # every module of _PRELOAD imported (or failed to)


def preload() -> None:
    try:
        from ragls.system.memory import freeze_heap

        # What start-up and each import leave alive (modules, classes, pygls's converters) lives
        # as long as the server: out of the garbage collector's walks, or a full collection
        # among these imports stalls the first requests (20-70 ms).
        freeze_heap()
        for name in _PRELOAD:
            try:
                importlib.import_module(name)
            finally:
                if name == "ragls.status":
                    _status_loaded.set()
            freeze_heap()
            FOREGROUND.yield_to_requests(_PRELOAD_YIELD_S)
        from ragls.text.escaping import warm

        warm()  # the context block's tag detector: ~0.25 s once, here rather than in the first answer
    except Exception:  # the import where the module is used reports it again
        log.exception("preloading the index modules failed")
    finally:
        _preloaded.set()


async def modules_loaded(*names: str) -> None:
    """`names` imported off the event loop while the preload thread runs. A handler importing
    a module the preload thread is still importing would block the loop on that module's
    import lock, and with it every other request (the first status answers waited ~120 ms
    for a retrieve's import of the protocol models)."""
    if not _preloaded.is_set():
        await asyncio.to_thread(lambda: [importlib.import_module(n) for n in names])


def to_plain(obj: Any) -> Any:
    """pygls hands custom params over as namedtuple-like objects; pydantic wants dicts."""
    if hasattr(obj, "_asdict"):
        return {k: to_plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


class RaglsProtocol(stdio.ErrorAnswers, LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        # Clients read the rag/* protocol version here (and in every IndexStatus).
        result.capabilities.experimental = {"ragls": {"protocolVersion": PROTOCOL_VERSION}}
        # Runs after the answer is written (pygls writes it synchronously once this returns).
        asyncio.get_running_loop().call_soon(threading.Thread(target=preload, name="ragls-preload", daemon=True).start)
        return result

    def structure_message(self, data: dict[str, Any]) -> Any:
        if isinstance(data, dict) and "jsonrpc" in data and "method" in data:
            method = str(data.get("method"))
            if method.startswith("rag/") and "params" not in data:
                data["params"] = {}  # the protocol allows omitting params for these methods
            try:
                return super().structure_message(data)
            except JsonRpcException as exc:
                if "id" not in data:
                    raise
                # Answer the request instead of leaving the client waiting forever.
                message = f"malformed {method} request: {exc.message or type(exc).__name__}"
                self.send_error(data["id"], JsonRpcInvalidParams.CODE, message)
                return stdio.Dropped()
        return super().structure_message(data)


class RaglsServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "ragls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=RaglsProtocol,
        )
        # The workspace's folders, each with its own settings and index (owned here or by
        # another ragls process on the same folder): the index API of every rag/* handler.
        self.ws = WorkspaceIndex(on_settings_error=self.show_settings_error, loaded=modules_loaded)
        self.init_options: dict[str, Any] = {}
        self.client_settings: dict[str, Any] = {}
        self._status_task: asyncio.Task[None] | None = None
        self._doc_timers: dict[str, asyncio.TimerHandle] = {}

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """pygls's stdio server, except that a pipe on stdin is read by the event loop instead of
        a thread hop per line, and the framing is ours (ragls/stdio.py): requests answered while
        the indexer is busy do not queue for the GIL before their handler starts, and a
        malformed Content-Length gets a parse error instead of a stream that stops answering."""
        from pygls.io_ import StdoutWriter

        stdin = stdin or sys.stdin.buffer
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def main() -> None:
            source = await stdio.loop_reader(stdin) or stdio.ThreadReader(stdin, self.thread_pool)
            await stdio.run(
                self._stop_event,
                source,
                self.protocol,
                self.protocol.framing_error,
                lambda exc: self.report_server_error(exc, JsonRpcException),
            )

        try:
            asyncio.run(main())
        except BrokenPipeError:
            log.error("connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    @property
    def folders(self) -> Folders:
        return self.ws.folders

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Unreadable input (malformed or absurdly deep JSON) gets a JSON-RPC parse error, not
        # an "Error in server" pop-up in the user's editor.
        log.warning("could not handle a message: %s", error)
        self.protocol.unreadable(error)

    # -- lifecycle ---------------------------------------------------------------------------
    async def start_indexing(self) -> None:
        """Open every indexed folder's index, then report their progress."""
        await self.ws.start()
        self.start_reporting()

    def start_reporting(self) -> None:
        """rag/statusChanged and $/progress from now on (progress.py)."""
        if self._status_task is None:
            from ragls.frontends.lsp.progress import report_status

            self._status_task = asyncio.get_running_loop().create_task(report_status(self.ws, self))

    def show_settings_error(self, message: str) -> None:
        log.error("%s", message)
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ragls: {message}"))

    async def pull_configuration(self) -> dict[str, Any]:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return {}
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="ragls")])
                ),
                5,
            )
        except Exception as exc:  # a client that cannot answer must not block indexing
            log.warning("workspace/configuration failed: %s", exc)
            return {}
        first = to_plain(result[0]) if result else None
        return first if isinstance(first, dict) else {}

    def load_settings(self) -> None:
        """Every folder's settings from the client's layers (WorkspaceIndex.load_settings)."""
        self.set_layers()
        self.ws.load_all_settings()
        logging.getLogger("ragls").setLevel(self.ws.settings.log_level.upper())

    def set_layers(self) -> None:
        self.ws.layers = [
            ("initializationOptions", self.init_options),
            ("workspace/configuration", self.client_settings),
        ]

    # -- status --------------------------------------------------------------------------------
    def early_status(self) -> dict[str, Any] | None:
        """The `starting` status as plain JSON while the status models are still loading
        (frontends/lsp/early_status.py); None once they are loaded, or when the status has more to say than
        `starting` (an index, a settings error or warning, a folder that is not a folder)."""
        if _status_loaded.is_set() or not self.folders.items or self.ws.settings_error is not None:
            return None
        if any(
            f.shared is not None or f.settings_error or f.warnings or not f.path.is_dir() for f in self.folders.indexed
        ):
            return None
        from ragls.frontends.lsp.early_status import starting_status

        return starting_status([(f.name, f.uri, f.path, f.nested_in) for f in self.folders.items])

    # -- documents ---------------------------------------------------------------------------
    def schedule_document(self, uri: str) -> None:
        """The buffer reaches its folder's index once edits pause (indexing.openBufferDebounceMs)."""
        path = uri_to_path(uri)
        found = None if path is None else self.folders.owner_of(path)
        if found is None or found[0].shared is None:
            return
        folder = found[0]
        if (t := self._doc_timers.pop(uri, None)) is not None:
            t.cancel()

        def push() -> None:
            self._doc_timers.pop(uri, None)
            try:
                text = self.workspace.get_text_document(uri).source
            except Exception:  # closed in the meantime
                return
            assert path is not None
            self.ws.open_document(path, text)

        delay = folder.settings.indexing.open_buffer_debounce_ms / 1000
        self._doc_timers[uri] = asyncio.get_running_loop().call_later(delay, push)


server = RaglsServer()


@server.feature(types.INITIALIZE)
def on_initialize(ls: RaglsServer, params: types.InitializeParams) -> None:
    if params.workspace_folders:
        for wf in params.workspace_folders:
            ls.folders.add(wf.uri, wf.name)
    elif params.root_uri:
        ls.folders.add(params.root_uri, None)
    elif params.root_path:
        ls.folders.add(Path(params.root_path).resolve().as_uri(), None)
    ls.folders.renest()
    opts = to_plain(params.initialization_options)
    ls.init_options = opts if isinstance(opts, dict) else {}


@server.feature(types.INITIALIZED)
async def on_initialized(ls: RaglsServer, _params: types.InitializedParams) -> None:
    ws = ls.ws
    if not any(f.path.is_dir() for f in ls.folders.items):
        ws.settings_error = NO_FOLDER
        log.error(ws.settings_error)
    ls.client_settings = await ls.pull_configuration()  # also for folders added later
    # The settings schema loads off the event loop (usually preloaded by now): requests that
    # arrive meanwhile are answered instead of queueing behind the import.
    await asyncio.to_thread(importlib.import_module, "ragls.config")
    ls.load_settings()
    if ws.settings_error is None and ws.settings.indexing.auto_index:
        await ls.start_indexing()
    else:
        ws.started.set()


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def on_folders(ls: RaglsServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """Removed folders are no longer searched (their index is closed, kept on disk); added ones
    are indexed in the background; a folder that became nested (or no longer is) follows."""
    ws = ls.ws
    await ws.change_folders([(wf.uri, wf.name) for wf in params.event.added], [wf.uri for wf in params.event.removed])
    if not ws.started.is_set() or ls._status_task is not None:
        return  # still starting up (it reports then), or reporting already
    if ws.settings.indexing.auto_index or any(f.shared for f in ls.folders.items):
        ls.start_reporting()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_config(ls: RaglsServer, params: types.DidChangeConfigurationParams) -> None:
    pulled = await ls.pull_configuration()
    if not pulled:
        raw = to_plain(params.settings)
        pulled = raw.get("ragls", raw) if isinstance(raw, dict) else {}
    ls.client_settings = pulled
    ls.set_layers()
    await ls.ws.reload_settings()
    logging.getLogger("ragls").setLevel(ls.ws.settings.log_level.upper())


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def on_open(ls: RaglsServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule_document(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def on_change(ls: RaglsServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule_document(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: RaglsServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    if (t := ls._doc_timers.pop(uri, None)) is not None:
        t.cancel()
    if (path := uri_to_path(uri)) is not None:
        ls.ws.close_document(path)


@server.feature(types.SHUTDOWN)
async def on_shutdown(ls: RaglsServer, _params: None) -> None:
    # Editors give a server about 2 s to exit. An embedding batch can outlast that, so wait
    # briefly for a clean stop; otherwise the next start recovers as after a crash.
    await asyncio.to_thread(ls.ws.close, 0.5)


@server.feature(types.EXIT)
def on_exit(ls: RaglsServer, _params: None) -> None:
    # Everything durable is already on disk (or recoverable, as after a crash); skipping the
    # interpreter's teardown keeps `exit` instant even with native threads mid-batch.
    sys.stdout.flush()
    os._exit(0 if ls.protocol._shutdown else 1)


@server.feature("rag/indexStatus")
async def rag_index_status(ls: RaglsServer, _params: Any) -> dict[str, Any]:
    if (early := ls.early_status()) is not None:
        return early
    env = await ls.ws.status()
    return env.status.model_dump(by_alias=True)


@server.feature("rag/reindex")
async def rag_reindex(ls: RaglsServer, params: Any) -> dict[str, Any]:
    await modules_loaded("ragls.protocol", "ragls.sharing.api")
    from ragls.protocol import ReindexParams
    from ragls.sharing.api import REINDEX, InvalidParams

    p = parse(REINDEX, params)
    assert isinstance(p, ReindexParams)
    try:
        started = await ls.ws.reindex(p.full)
        ls.start_reporting()  # autoIndex off: the first run starts here
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    return {"started": started}


@server.feature("rag/retrieve")
async def rag_retrieve(ls: RaglsServer, params: Any) -> dict[str, Any]:
    with FOREGROUND.request():  # from its first import on: background work waits
        return await _retrieve(ls, params)


async def _retrieve(ls: RaglsServer, params: Any) -> dict[str, Any]:
    await modules_loaded("ragls.protocol", "ragls.store", "ragls.sharing.api")
    from ragls.protocol import RetrieveParams
    from ragls.sharing.api import RETRIEVE, InvalidParams

    raw = to_plain(params)
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams("params must be an object with a 'query' string")
    p = parse(RETRIEVE, raw)
    assert isinstance(p, RetrieveParams)
    try:
        out = await ls.ws.retrieve(p)
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    return out.model_dump(by_alias=True)


async def graph_request(name: str, params: Any, ask: Callable[[Any], Awaitable[Any]]) -> dict[str, Any]:
    """A code-graph request (rag/references, rag/related, rag/repoMap): its params by the method
    table's model, the workspace's answer as JSON."""
    with FOREGROUND.request():
        await modules_loaded("ragls.protocol", "ragls.sharing.api")
        from ragls.sharing.api import METHODS, InvalidParams

        p = parse(METHODS[name], params)
        try:
            out = await ask(p)
        except InvalidParams as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        return out.model_dump(by_alias=True)  # type: ignore[no-any-return]


@server.feature("rag/references")
async def rag_references(ls: RaglsServer, params: Any) -> dict[str, Any]:
    return await graph_request("rag/references", params, ls.ws.references)


@server.feature("rag/related")
async def rag_related(ls: RaglsServer, params: Any) -> dict[str, Any]:
    return await graph_request("rag/related", params, ls.ws.related)


@server.feature("rag/repoMap")
async def rag_repo_map(ls: RaglsServer, params: Any) -> dict[str, Any]:
    return await graph_request("rag/repoMap", params, ls.ws.repo_map)


@server.feature("rag/feedback")
async def rag_feedback(ls: RaglsServer, params: Any) -> dict[str, Any]:
    """A rating of one of this server's answers, stored privately (docs/feedback.md)."""
    await modules_loaded("ragls.protocol", "ragls.sharing.api")
    from ragls.sharing.api import FEEDBACK, InvalidParams

    p = parse(FEEDBACK, params)
    try:
        out = await ls.ws.feedback(p)
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    return out.model_dump(by_alias=True)


def parse(method: Any, params: Any) -> Any:
    """A handler's params as the method table's model (sharing/api.py); InvalidParams naming the field."""
    from ragls.sharing.api import InvalidParams, parse_params

    try:
        return parse_params(method, to_plain(params) or {})
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


def serve() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # pygls logs every message at INFO: far too loud for an editor's output panel.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per embedding request
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # one INFO line per change
    # ...and logs a traceback for every InvalidParams we raise on purpose; our handlers log
    # their own failures.
    logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)
    # The modules of indexing load in a thread right after `initialize`, holding the GIL for
    # most of 0.3 s; a request read meanwhile takes dozens of GIL hand-offs, each up to one
    # switch interval: 1 ms instead of 5 (the indexer keeps it so while it works).
    sys.setswitchinterval(0.001)
    server.start_io()
