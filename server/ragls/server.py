"""The LSP face of ragls: lifecycle, rag/* handlers, progress. No pipeline logic here."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import sys
import threading
import uuid
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcParseError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from ragls import PROTOCOL_VERSION, __version__
from ragls.folders import Folder, Folders, UnknownFolder, uri_to_path
from ragls.foreground import FOREGROUND

# Start-up: `initialize` is answered with pygls and the modules above only. Settings (pydantic),
# the protocol models, the index and retrieval (numpy, tree-sitter, the store, the model) are
# imported where first used, once the client has its answer.
if TYPE_CHECKING:
    from pydantic import ValidationError

    from ragls.config import Settings
    from ragls.protocol import IndexStatus, RetrieveParams, RetrieveResultOut
    from ragls.stdio import FramingError

log = logging.getLogger("ragls")

# What indexing and retrieval import (settings, protocol models, the pipeline, numpy): loaded in a
# thread once `initialize` is answered, while the client sends `initialized` and its settings.
# The status models first: a client asks for rag/indexStatus right after `initialized`.
_PRELOAD = ("ragls.status", "ragls.shared_index", "ragls.answer")


# Set once the status models are imported (or failed to): until then rag/indexStatus answers
# the `starting` status as plain JSON (early_status.py) instead of waiting for them.
_status_loaded = threading.Event()
_preloaded = threading.Event()  # every module of _PRELOAD imported (or failed to)


def preload() -> None:
    try:
        for name in _PRELOAD:
            try:
                importlib.import_module(name)
            finally:
                if name == "ragls.status":
                    _status_loaded.set()
        from ragls.escaping import warm

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


_STATUS_INTERVAL = 0.5  # seconds between rag/statusChanged while counts move
_PROGRESS_INTERVAL = 0.25


def to_plain(obj: Any) -> Any:
    """pygls hands custom params over as namedtuple-like objects; pydantic wants dicts."""
    if hasattr(obj, "_asdict"):
        return {k: to_plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


def invalid_params(err: ValidationError) -> JsonRpcInvalidParams:
    parts = []
    for e in err.errors()[:5]:
        loc = ".".join(str(p) for p in e["loc"]) or "params"
        parts.append(f"{loc}: {e['msg']}")
    return JsonRpcInvalidParams("; ".join(parts))


class _Dropped:
    """A message already answered with an error; handle_message ignores unknown versions."""

    jsonrpc = "dropped"


class RaglsProtocol(LanguageServerProtocol):
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
                self._send_response(
                    data["id"],
                    None,
                    JsonRpcInvalidParams(
                        f"malformed {method} request: {exc.message or type(exc).__name__}"
                    ).to_response_error(),
                )
                return _Dropped()
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
        # another ragls process on the same folder).
        self.folders = Folders()
        self.init_options: dict[str, Any] = {}
        self.client_settings: dict[str, Any] = {}
        self._status_task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._doc_timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # folders being opened in the background
        self.settings_error: str | None = None  # the workspace has no folder to index
        self._shown_errors: set[str] = set()  # settings errors shown since the settings last changed
        self.started = asyncio.Event()  # set once indexing starts (or cannot)
        self.status_failures = 0  # status ticks that raised (logged, then reporting goes on)

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """pygls's stdio server, except that a pipe on stdin is read by the event loop instead of
        a thread hop per line, and the framing is ours (ragls/stdio.py): requests answered while
        the indexer is busy do not queue for the GIL before their handler starts, and a
        malformed Content-Length gets a parse error instead of a stream that stops answering."""
        from pygls.io_ import StdoutWriter

        from ragls import stdio

        stdin = stdin or sys.stdin.buffer
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def main() -> None:
            source = await stdio.loop_reader(stdin) or stdio.ThreadReader(stdin, self.thread_pool)
            await stdio.run(
                self._stop_event,
                source,
                self.protocol,
                self.report_framing_error,
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
    def root(self) -> Path | None:
        """The first folder (the workspace's `workspace` path)."""
        return self.folders.items[0].path if self.folders.items else None

    @property
    def settings(self) -> Settings:
        """The first folder's settings: they size a multi-folder answer (topK, maxChars)."""
        if self.folders.items:
            return self.folders.items[0].settings
        from ragls.config import Settings

        return Settings()

    def send_parse_error(self, message: str, rid: int | str | None = None) -> None:
        # As a plain dict through pygls's own writer (framed, never interleaved with another
        # message): pygls's response models drop a None id, and JSON-RPC wants `"id": null`.
        error = {"code": JsonRpcParseError.CODE, "message": message}
        self.protocol._send_data({"jsonrpc": "2.0", "id": rid, "error": error})

    def report_framing_error(self, error: FramingError) -> None:
        self.send_parse_error(error.message, error.id)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Unreadable input (malformed or absurdly deep JSON) gets a JSON-RPC parse error, not
        # an "Error in server" pop-up in the user's editor.
        log.warning("could not handle a message: %s", error)
        if isinstance(error, RecursionError | ValueError):
            self.send_parse_error(f"cannot parse message: {error}")

    # -- lifecycle ---------------------------------------------------------------------------
    async def start_indexing(self) -> None:
        """Open the index of every indexed folder that has none yet (concurrently)."""
        loop = asyncio.get_running_loop()
        if self._wake is None:
            self._wake = asyncio.Event()
        todo = [f for f in self.folders.indexed if f.index is None and f.path.is_dir()]
        await asyncio.gather(*(self.open_folder(f) for f in todo))
        if self._status_task is None:
            self._status_task = loop.create_task(self._report_status())
        self.started.set()

    async def open_folder(self, f: Folder) -> None:
        if f.index is not None or f.opening:
            return
        f.opening = True
        try:
            await self._open_folder(f)
        finally:
            f.opening = False

    async def _open_folder(self, f: Folder) -> None:
        # Imported off the event loop (requests keep being answered), usually already preloaded.
        await asyncio.to_thread(importlib.import_module, "ragls.shared_index")
        from ragls.shared_index import SharedIndex

        loop = asyncio.get_running_loop()
        assert self._wake is not None
        wake = self._wake
        f.ready = ready = asyncio.Event()

        def changed() -> None:
            loop.call_soon_threadsafe(wake.set)
            service = index.service
            if service is not None and service.indexer.ready.is_set():
                loop.call_soon_threadsafe(ready.set)

        from ragls.private import secure_cache

        # A cache left readable by others (an older ragls, made by hand) is closed up first;
        # the warning stays in this folder's status.
        if fixed := await asyncio.to_thread(secure_cache, f.settings, f.path):
            f.warnings = [*f.warnings, *fixed]
        index = SharedIndex(f.path, f.settings, on_change=changed)
        index.settings_error = f.settings_error
        index.settings_warnings = f.warnings
        await asyncio.to_thread(index.open)  # owner at once, or a client of the folder's owner
        if f.removed or f.nested_in is not None:  # removed (or covered) while it was opening
            await asyncio.to_thread(index.close)
            return
        f.index = index
        wake.set()

    def open_in_background(self, f: Folder) -> None:
        task = asyncio.get_running_loop().create_task(self.open_folder(f))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close_folder(self, f: Folder, timeout: float = 1.5) -> None:
        """Stop searching a folder; its index stays on disk for the next time it is opened."""
        index, f.index = f.index, None
        if index is not None:
            await asyncio.to_thread(index.close, timeout)
        if self._wake is not None:
            self._wake.set()

    def stop_indexing(self, timeout: float = 1.5) -> None:
        for f in self.folders.items:
            index, f.index = f.index, None
            if index is not None:
                index.close(timeout)

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

    def load_folder_settings(self, f: Folder) -> None:
        """Merge the layers for a folder (its own .ragls.toml); on a bad value fall back to fewer
        client layers, then to defaults and the folder file, as a typo must not stop indexing."""
        from ragls.config import SettingsError, resolve_settings

        layers = [("initializationOptions", self.init_options), ("workspace/configuration", self.client_settings)]
        first_error: str | None = None
        for n in (2, 1, 0):
            try:
                resolved = resolve_settings(f.path, *layers[:n])
            except SettingsError as exc:
                if first_error is None:
                    first_error = str(exc)
                    if first_error not in self._shown_errors:  # once, not once per folder
                        self._shown_errors.add(first_error)
                        log.error("%s", exc)
                        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ragls: {exc}"))
                continue
            f.settings, f.warnings = resolved.settings, resolved.warnings
            f.settings_error = None
            break
        else:
            f.settings_error = first_error
        if f.index is not None:
            f.index.settings_warnings = f.warnings
        logging.getLogger("ragls").setLevel(self.settings.log_level.upper())

    # -- status and progress -----------------------------------------------------------------
    async def folder_status(self, f: Folder) -> tuple[IndexStatus, int]:
        """A folder's index status (this process's, or the owner's) and its count of index runs."""
        from ragls.status import starting_status

        if f.index is None:
            why = f.settings_error or (None if f.path.is_dir() else f"{f.path} is not a folder")
            st = starting_status(f.path, f.settings, why)
            st.warnings = list(f.warnings)
            return st, 0
        try:
            st, runs = await asyncio.to_thread(f.index.status)
        except Exception as exc:  # the owner vanished and no successor answered yet, or hangs
            return starting_status(f.path, f.settings, f"index unavailable: {exc}"), 0
        if st.message is None and f.settings_error:
            st.message = f.settings_error
        if not st.warnings:
            st.warnings = list(f.warnings)
        return st, runs

    def early_status(self) -> dict[str, Any] | None:
        """The `starting` status as plain JSON while the status models are still loading
        (early_status.py); None once they are loaded, or when the status has more to say than
        `starting` (an index, a settings error or warning, a folder that is not a folder)."""
        if _status_loaded.is_set() or not self.folders.items or self.settings_error is not None:
            return None
        if any(
            f.index is not None or f.settings_error or f.warnings or not f.path.is_dir() for f in self.folders.indexed
        ):
            return None
        from ragls.early_status import starting_status

        return starting_status([(f.name, f.uri, f.path, f.nested_in) for f in self.folders.items])

    async def status(self) -> tuple[IndexStatus, int]:
        """The workspace's status (totals and one entry per folder) and the count of index runs."""
        from ragls.protocol import FolderStatus
        from ragls.status import folder_entry, starting_status, workspace_status

        if not self.folders.items:
            return starting_status(None, self.settings, self.settings_error), 0
        indexed = self.folders.indexed
        results = await asyncio.gather(*(self.folder_status(f) for f in indexed))
        own = {f.name: st for f, (st, _) in zip(indexed, results, strict=True)}
        parts: list[tuple[FolderStatus, IndexStatus | None]] = []
        for f in self.folders.items:
            if f.nested_in is None:
                parts.append((folder_entry(f.name, f.uri, f.path, own[f.name]), own[f.name]))
            else:
                parts.append((folder_entry(f.name, f.uri, f.path, own[f.nested_in], f.nested_in), None))
        return workspace_status(parts), sum(runs for _, runs in results)

    async def _report_status(self) -> None:
        """Turn indexer state into $/progress and rag/statusChanged, throttled."""
        from ragls.status import progress_end_message, progress_message, progress_percentage

        token: str | None = None
        last_key: tuple[str, str] | None = None
        last_counts: tuple[int, ...] | None = None
        last_sent = 0.0
        seen_runs = 0
        seen_folders: list[str] = []
        loop = asyncio.get_running_loop()
        supports_progress = bool(self.client_capabilities.window and self.client_capabilities.window.work_done_progress)
        while True:
            wake = self._wake
            if wake is not None:
                try:
                    await asyncio.wait_for(wake.wait(), _PROGRESS_INTERVAL)
                except TimeoutError:
                    pass
                wake.clear()
            else:
                await asyncio.sleep(_PROGRESS_INTERVAL)
            try:
                st, runs = await self.status()
                key = (st.state, st.phase)
                counts = (st.files_total, st.lexical.done, st.dense.done, st.files_failed, st.chunks, len(st.folders))
                now = loop.time()
                if key != last_key or (counts != last_counts and now - last_sent >= _STATUS_INTERVAL):
                    self.protocol.notify("rag/statusChanged", st.model_dump(by_alias=True))
                    last_key, last_counts, last_sent = key, counts, now
                if not supports_progress:
                    continue
                pct = progress_percentage(st)
                msg = progress_message(st)
                # A run that finished between two polls (everything cached) still gets its
                # begin/end pair, so clients always see indexing start and end.
                runs = runs if any(f.index for f in self.folders.items) else seen_runs
                folders = [f.name for f in self.folders.indexed]
                # A removed folder takes its runs out of the sum: that is no run to report.
                missed = runs != seen_runs and not (folders != seen_folders and runs < seen_runs)
                seen_runs, seen_folders = runs, folders
                if (st.state == "indexing" or missed) and token is None:
                    token = str(uuid.uuid4())
                    try:
                        await asyncio.wait_for(self.work_done_progress.create_async(token), 5)
                    except Exception:  # the client refused the token: no progress UI then
                        token = None
                        supports_progress = False
                        continue
                    begin = f"0/{st.files_total} files" if st.files_total else "discovering files"
                    self.work_done_progress.begin(
                        token,
                        types.WorkDoneProgressBegin(
                            title="ragls: indexing", message=begin, percentage=0, cancellable=False
                        ),
                    )
                elif st.state == "indexing" and token is not None:
                    self.work_done_progress.report(
                        token, types.WorkDoneProgressReport(message=msg, percentage=min(pct, 99))
                    )
                if st.state != "indexing" and token is not None:
                    end = progress_end_message(st)
                    if st.files_total:  # the final count, also for runs too short for a report
                        done = st.dense.done + st.files_failed
                        self.work_done_progress.report(
                            token,
                            types.WorkDoneProgressReport(message=f"{done}/{st.files_total} files", percentage=100),
                        )
                    self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=end))
                    token = None
            except Exception:  # one bad tick must not end status reporting for the session
                log.exception("status reporting failed; continuing")
                self.status_failures += 1
                await asyncio.sleep(1.0)

    # -- retrieval ---------------------------------------------------------------------------
    async def retrieve(self, p: RetrieveParams) -> RetrieveResultOut:
        """Search the requested folders concurrently; one folder answers as itself, several
        are fused into one ranking (answer.fuse). Raises UnknownFolder and QueryError."""
        from ragls.protocol import RetrieveResultOut

        plan = self.folders.plan(p.folders, p.paths)
        if plan and any(f.index is None for f, _ in plan) and not self.started.is_set():
            # Before the retrieval modules are needed (they may still be loading: ~100 ms).
            if fresh := await self._first_index(plan):
                return fresh
            # `initialized` is still reading the client's settings: wait rather than answer empty.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.started.wait(), 10)
        from ragls.answer import failed, fuse

        if not self.folders.items:
            return failed(self.settings_error or "no workspace folder to search")
        if not plan:
            return RetrieveResultOut(context="", chunks=[], took_ms=0.0)
        if not self.folders.multi:
            ((f, _globs),) = plan
            return await self._retrieve_folder(f, p)
        rs = self.settings.retrieval
        top_k = p.top_k if "top_k" in p.model_fields_set else rs.top_k
        max_chars = p.max_chars if "max_chars" in p.model_fields_set else rs.max_chars
        # Each folder is asked for the whole topK; the context is built once, after fusion.
        answers = await asyncio.gather(
            *(
                self._retrieve_folder(
                    f, p.model_copy(update={"paths": globs, "folders": None, "top_k": top_k, "max_chars": 0})
                )
                for f, globs in plan
            )
        )
        parts = [(f.name, f.uri, res) for (f, _), res in zip(plan, answers, strict=True)]
        return fuse(parts, p.query, top_k, max_chars, rs.symbol_boost)

    async def _first_index(self, plan: list[tuple[Folder, list[str] | None]]) -> RetrieveResultOut | None:
        """An empty answer, at once, when every folder asked is being indexed for the first
        time: until its first files are stored nothing can be found, so waiting for the new
        index to open (~0.5 s) would only delay the same empty answer."""
        from ragls.protocol import RetrieveResultOut
        from ragls.store import never_indexed

        folders = [f for f, _ in plan]
        new = await asyncio.to_thread(lambda: all(never_indexed(f.path, f.settings) for f in folders))
        if not new or any(f.settings_error for f in folders):
            return None
        warning = "indexing has just started: nothing in this workspace is searchable yet (rag/indexStatus shows it)"
        return RetrieveResultOut(context="", chunks=[], took_ms=0.0, warnings=[warning])

    async def _retrieve_folder(self, f: Folder, p: RetrieveParams) -> RetrieveResultOut:
        await modules_loaded("ragls.answer")
        from ragls.answer import failed
        from ragls.retrieval import QueryError

        index = f.index
        if index is None:
            return failed(f.settings_error or self.settings_error or "indexing has not started")
        service = index.service
        if service is not None and not service.indexer.ready.is_set():
            # Wait on the event loop, not in a pool thread: early requests cannot starve the pool.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(f.ready.wait(), 30)
        try:
            res = await asyncio.to_thread(index.retrieve, p)
        except QueryError:
            raise
        except Exception as exc:  # the owner can vanish mid-request; chat must keep working
            log.error("retrieve failed in %s: %s", f.path, exc)
            return failed(f"retrieval failed: {exc}")
        for c in res.chunks:  # the client's name for the folder
            c.folder, c.folder_uri = f.name, f.uri
        return res

    # -- documents ---------------------------------------------------------------------------
    def rel_of(self, uri: str) -> tuple[Folder, str] | None:
        path = uri_to_path(uri)
        return None if path is None else self.folders.owner_of(path)

    def schedule_document(self, uri: str) -> None:
        found = self.rel_of(uri)
        if found is None or found[0].index is None:
            return
        folder, rel = found
        loop = asyncio.get_running_loop()
        if (t := self._doc_timers.pop(uri, None)) is not None:
            t.cancel()

        def push() -> None:
            self._doc_timers.pop(uri, None)
            index = folder.index
            if index is None:
                return
            try:
                text = self.workspace.get_text_document(uri).source
            except Exception:  # closed in the meantime
                return
            index.open_document(rel, text)

        delay = folder.settings.indexing.open_buffer_debounce_ms / 1000
        self._doc_timers[uri] = loop.call_later(delay, push)


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
    if not any(f.path.is_dir() for f in ls.folders.items):
        ls.settings_error = "no workspace folder: open a folder to index it"
        log.error(ls.settings_error)
    ls.client_settings = await ls.pull_configuration()  # also for folders added later
    # The settings schema loads off the event loop (usually preloaded by now): requests that
    # arrive meanwhile are answered instead of queueing behind the import.
    await asyncio.to_thread(importlib.import_module, "ragls.config")
    ls._shown_errors.clear()
    for f in ls.folders.items:
        ls.load_folder_settings(f)
    if ls.settings_error is None and ls.settings.indexing.auto_index:
        await ls.start_indexing()
    else:
        ls.started.set()


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def on_folders(ls: RaglsServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """Removed folders are no longer searched (their index is closed, kept on disk); added ones
    are indexed in the background; a folder that became nested (or no longer is) follows."""
    gone = [f for wf in params.event.removed if (f := ls.folders.remove(wf.uri)) is not None]
    added = [f for wf in params.event.added if (f := ls.folders.add(wf.uri, wf.name)) is not None]
    before = {f.name: f.nested_in for f in ls.folders.items}
    ls.folders.renest()
    ls.settings_error = None if ls.folders.items else "no workspace folder: open a folder to index it"
    for f in added:
        ls.load_folder_settings(f)
    covered = [f for f in ls.folders.items if f.nested_in is not None and f.index is not None]
    await asyncio.gather(*(ls.close_folder(f) for f in [*gone, *covered]))
    if not ls.started.is_set():
        return  # `initialized` is still starting up: it opens every folder then
    if not ls.settings.indexing.auto_index and not any(f.index for f in ls.folders.items):
        return
    if ls._wake is None:
        ls._wake = asyncio.Event()
    if ls._status_task is None:
        ls._status_task = asyncio.get_running_loop().create_task(ls._report_status())
    for f in ls.folders.indexed:  # added, or uncovered by a removal (`before` was nested)
        if f.index is None and f.path.is_dir() and (f in added or before.get(f.name) is not None):
            ls.open_in_background(f)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_config(ls: RaglsServer, params: types.DidChangeConfigurationParams) -> None:
    pulled = await ls.pull_configuration()
    if not pulled:
        raw = to_plain(params.settings)
        pulled = raw.get("ragls", raw) if isinstance(raw, dict) else {}
    ls.client_settings = pulled
    ls._shown_errors.clear()
    for f in ls.folders.items:
        old = f.settings
        ls.load_folder_settings(f)
        # Retrieval settings apply to the next request; anything else means a fresh index run.
        keep = {"retrieval", "log_level"}
        if old.model_dump(exclude=keep) != f.settings.model_dump(exclude=keep) and f.index is not None:
            log.info("settings changed: restarting the indexer of %s", f.path)
            await asyncio.to_thread(f.index.restart, f.settings)


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
    found = ls.rel_of(uri)
    if found is not None and found[0].index is not None:
        found[0].index.close_document(found[1])


@server.feature(types.SHUTDOWN)
async def on_shutdown(ls: RaglsServer, _params: None) -> None:
    # Editors give a server about 2 s to exit. An embedding batch can outlast that, so wait
    # briefly for a clean stop; otherwise the next start recovers as after a crash.
    await asyncio.to_thread(ls.stop_indexing, 0.5)


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
    with FOREGROUND.request():  # the indexer's store writes wait meanwhile (foreground.py)
        st, _runs = await ls.status()
        return st.model_dump(by_alias=True)


@server.feature("rag/reindex")
async def rag_reindex(ls: RaglsServer, params: Any) -> dict[str, Any]:
    await modules_loaded("ragls.protocol")
    from pydantic import ValidationError

    from ragls.protocol import ReindexParams

    try:
        p = ReindexParams.model_validate(to_plain(params) or {})
    except ValidationError as exc:
        raise invalid_params(exc) from exc
    if not any(f.path.is_dir() for f in ls.folders.indexed):
        raise JsonRpcInvalidParams("no workspace folder to index")
    indexes = [f.index for f in ls.folders.indexed if f.index is not None]
    fresh = len(indexes) < len(ls.folders.indexed)
    if fresh:  # e.g. autoIndex off: opening an index starts its first run
        await ls.start_indexing()
    started = await asyncio.gather(*(asyncio.to_thread(index.reindex, p.full) for index in indexes))
    return {"started": fresh or any(started)}


@server.feature("rag/retrieve")
async def rag_retrieve(ls: RaglsServer, params: Any) -> dict[str, Any]:
    await modules_loaded("ragls.protocol", "ragls.store")
    from pydantic import ValidationError

    from ragls.protocol import RetrieveParams

    raw = to_plain(params)
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams("params must be an object with a 'query' string")
    try:
        p = RetrieveParams.model_validate(raw)
        if p.paths:
            from ragls.retrieval import compile_globs

            compile_globs(p.paths)
        with FOREGROUND.request():  # the indexer's store writes wait meanwhile (foreground.py)
            out = await ls.retrieve(p)
    except ValidationError as exc:
        raise invalid_params(exc) from exc
    except UnknownFolder as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    except ValueError as exc:
        # ragls.retrieval is imported only when needed: a first request can be answered while it
        # still loads.
        from ragls.retrieval import QueryError

        if not isinstance(exc, QueryError):
            raise
        raise JsonRpcInvalidParams(str(exc)) from exc
    return out.model_dump(by_alias=True)


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
