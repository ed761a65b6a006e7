"""The LSP face of ragls: lifecycle, rag/* handlers, progress. No pipeline logic here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import uuid
from collections.abc import Generator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcParseError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from ragls import __version__
from ragls.answer import failed
from ragls.config import Settings, SettingsError, resolve_settings
from ragls.protocol import PROTOCOL_VERSION, IndexStatus, ReindexParams, RetrieveParams
from ragls.retrieval import QueryError, compile_globs
from ragls.service import starting_status
from ragls.shared_index import SharedIndex
from ragls.status import progress_end_message, progress_message, progress_percentage

log = logging.getLogger("ragls")

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


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


class _Dropped:
    """A message already answered with an error; handle_message ignores unknown versions."""

    jsonrpc = "dropped"


class RaglsProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        # Clients read the rag/* protocol version here (and in every IndexStatus).
        result.capabilities.experimental = {"ragls": {"protocolVersion": PROTOCOL_VERSION}}
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
        self.root: Path | None = None
        self.init_options: dict[str, Any] = {}
        self.client_settings: dict[str, Any] = {}
        self.settings = Settings()
        self.index: SharedIndex | None = None  # this folder's index: owned here or by another ragls
        self._status_task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._doc_timers: dict[str, asyncio.TimerHandle] = {}
        self.settings_error: str | None = None
        self.settings_warnings: list[str] = []  # e.g. sensitive keys the workspace file may not set
        self.started = asyncio.Event()  # set once indexing starts (or cannot)
        self.index_ready = asyncio.Event()  # set once this process's index store is open
        self.status_failures = 0  # status ticks that raised (logged, then reporting goes on)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Unreadable input (malformed or absurdly deep JSON) gets a JSON-RPC parse error, not
        # an "Error in server" pop-up in the user's editor.
        log.warning("could not handle a message: %s", error)
        if isinstance(error, RecursionError | ValueError):
            self.protocol._send_response(
                None, None, JsonRpcParseError(f"cannot parse message: {error}").to_response_error()
            )  # type: ignore[arg-type]

    # -- lifecycle ---------------------------------------------------------------------------
    async def start_indexing(self) -> None:
        assert self.root is not None
        loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        wake = self._wake

        self.index_ready = asyncio.Event()
        ready = self.index_ready

        def changed() -> None:
            loop.call_soon_threadsafe(wake.set)
            service = index.service
            if service is not None and service.indexer.ready.is_set():
                loop.call_soon_threadsafe(ready.set)

        index = SharedIndex(self.root, self.settings, on_change=changed)
        index.settings_error = self.settings_error
        index.settings_warnings = self.settings_warnings
        await asyncio.to_thread(index.open)  # owner at once, or a client of the folder's owner
        self.index = index
        if self._status_task is None:
            self._status_task = loop.create_task(self._report_status())
        self.started.set()

    def stop_indexing(self, timeout: float = 1.5) -> None:
        if self.index is not None:
            self.index.close(timeout)
            self.index = None

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

    def reload_settings(self) -> bool:
        """Merge the layers; on a bad value keep the last good settings and say why."""
        try:
            resolved = resolve_settings(
                self.root,
                ("initializationOptions", self.init_options),
                ("workspace/configuration", self.client_settings),
            )
            self.settings = resolved.settings
            self.settings_warnings = resolved.warnings
            if self.index is not None:
                self.index.settings_warnings = resolved.warnings
            self.settings_error = None
            logging.getLogger("ragls").setLevel(self.settings.log_level.upper())
            return True
        except SettingsError as exc:
            self.settings_error = str(exc)
            log.error("%s", exc)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ragls: {exc}"))
            return False

    # -- status and progress -----------------------------------------------------------------
    async def status(self) -> tuple[IndexStatus, int]:
        """The index status (this process's, or the owner's) and the count of index runs."""
        if self.index is None:
            st = starting_status(self.root, self.settings, self.settings_error)
            st.warnings = list(self.settings_warnings)
            return st, 0
        try:
            st, runs = await asyncio.to_thread(self.index.status)
        except Exception as exc:  # the owner vanished and no successor answered yet, or hangs
            return starting_status(self.root, self.settings, f"index unavailable: {exc}"), 0
        if st.message is None and self.settings_error:
            st.message = self.settings_error
        if not st.warnings:
            st.warnings = list(self.settings_warnings)
        return st, runs

    async def _report_status(self) -> None:
        """Turn indexer state into $/progress and rag/statusChanged, throttled."""
        token: str | None = None
        last_key: tuple[str, str] | None = None
        last_counts: tuple[int, ...] | None = None
        last_sent = 0.0
        seen_runs = 0
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
                counts = (st.files_total, st.lexical.done, st.dense.done, st.files_failed, st.chunks)
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
                runs = runs if self.index else seen_runs
                missed = runs != seen_runs
                seen_runs = runs
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

    # -- documents ---------------------------------------------------------------------------
    def rel_of(self, uri: str) -> str | None:
        path = uri_to_path(uri)
        if path is None or self.root is None:
            return None
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def schedule_document(self, uri: str) -> None:
        rel = self.rel_of(uri)
        if rel is None or self.index is None:
            return
        loop = asyncio.get_running_loop()
        if (t := self._doc_timers.pop(uri, None)) is not None:
            t.cancel()

        def push() -> None:
            self._doc_timers.pop(uri, None)
            index = self.index
            if index is None:
                return
            try:
                text = self.workspace.get_text_document(uri).source
            except Exception:  # closed in the meantime
                return
            index.open_document(rel, text)

        self._doc_timers[uri] = loop.call_later(self.settings.indexing.open_buffer_debounce_ms / 1000, push)


server = RaglsServer()


@server.feature(types.INITIALIZE)
def on_initialize(ls: RaglsServer, params: types.InitializeParams) -> None:
    root: Path | None = None
    if params.workspace_folders:
        root = uri_to_path(params.workspace_folders[0].uri)
    elif params.root_uri:
        root = uri_to_path(params.root_uri)
    elif params.root_path:
        root = Path(params.root_path)
    ls.root = root.resolve() if root else None
    opts = to_plain(params.initialization_options)
    ls.init_options = opts if isinstance(opts, dict) else {}


@server.feature(types.INITIALIZED)
async def on_initialized(ls: RaglsServer, _params: types.InitializedParams) -> None:
    if ls.root is None or not ls.root.is_dir():
        ls.settings_error = "no workspace folder: open a folder to index it"
        log.error(ls.settings_error)
        ls.started.set()
        return
    ls.client_settings = await ls.pull_configuration()
    if not ls.reload_settings():
        # Fall back to the init options alone, then to defaults: a typo must not stop indexing.
        ls.client_settings = {}
        if not ls.reload_settings():
            ls.init_options = {}
            ls.reload_settings()
    if ls.settings.indexing.auto_index:
        await ls.start_indexing()
    else:
        ls.started.set()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_config(ls: RaglsServer, params: types.DidChangeConfigurationParams) -> None:
    pulled = await ls.pull_configuration()
    if not pulled:
        raw = to_plain(params.settings)
        pulled = raw.get("ragls", raw) if isinstance(raw, dict) else {}
    old = ls.settings
    ls.client_settings = pulled
    if not ls.reload_settings():
        return
    # Retrieval settings apply to the next request; anything else means a fresh index run.
    if old.model_dump(exclude={"retrieval", "log_level"}) != ls.settings.model_dump(exclude={"retrieval", "log_level"}):
        if ls.index is not None and ls.root is not None:
            log.info("settings changed: restarting the indexer")
            await asyncio.to_thread(ls.index.restart, ls.settings)


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
    rel = ls.rel_of(uri)
    if rel is not None and ls.index is not None:
        ls.index.close_document(rel)


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
    st, _runs = await ls.status()
    return st.model_dump(by_alias=True)


@server.feature("rag/reindex")
async def rag_reindex(ls: RaglsServer, params: Any) -> dict[str, Any]:
    try:
        p = ReindexParams.model_validate(to_plain(params) or {})
    except ValidationError as exc:
        raise invalid_params(exc) from exc
    if ls.index is None:
        if ls.root is None:
            raise JsonRpcInvalidParams("no workspace folder to index")
        await ls.start_indexing()
        return {"started": True}
    return {"started": await asyncio.to_thread(ls.index.reindex, p.full)}


@server.feature("rag/retrieve")
async def rag_retrieve(ls: RaglsServer, params: Any) -> dict[str, Any]:
    raw = to_plain(params)
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams("params must be an object with a 'query' string")
    try:
        p = RetrieveParams.model_validate(raw)
        if p.paths:
            compile_globs(p.paths)
    except ValidationError as exc:
        raise invalid_params(exc) from exc
    except QueryError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    if ls.index is None and ls.root is not None and not ls.settings_error:
        # `initialized` is still reading the client's settings: wait rather than answer empty.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ls.started.wait(), 10)
    index = ls.index
    if index is None:
        return failed(ls.settings_error or "indexing has not started").model_dump(by_alias=True)
    service = index.service
    if service is not None and not service.indexer.ready.is_set():
        # Wait on the event loop, not in a pool thread: early requests cannot starve the pool.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ls.index_ready.wait(), 30)
    try:
        out = await asyncio.to_thread(index.retrieve, p)
    except QueryError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    except Exception as exc:  # the owner can vanish mid-request; chat must keep working
        log.error("retrieve failed: %s", exc)
        return failed(f"retrieval failed: {exc}").model_dump(by_alias=True)
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
    server.start_io()
