"""A folder's index as every ragls process sees it: owned here, or reached through the owner.

`SharedIndex.open()` takes the folder's owner lock (owner.py) and runs the index in this
process, serving it on the owner socket; or, when another process holds the lock, connects
to that owner. Faces (LSP, MCP, CLI) call the same methods either way. When the owner goes
away (exit, crash, kill -9) every client notices the closed socket and races for the lock:
one becomes the owner on the same index directory (the manifest and embedding cache make this
a warm start: nothing is re-embedded), the others connect to it, and each re-sends its own
open editor buffers.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragls import __version__
from ragls.config import Settings
from ragls.foreground import FOREGROUND
from ragls.owner import (
    INVALID_PARAMS,
    InvalidParams,
    OwnerClient,
    OwnerGone,
    OwnerLock,
    OwnerServer,
    RemoteError,
    Rendezvous,
    rendezvous,
)
from ragls.protocol import (
    DocumentParams,
    IndexStatus,
    OwnerHello,
    ReindexParams,
    RetrieveParams,
    RetrieveResultOut,
    StatusEnvelope,
    SymbolParams,
)
from ragls.retrieval import QueryError
from ragls.service import LOCAL, IndexService

log = logging.getLogger(__name__)

OWNER, CLIENT, PRIVATE = "owner", "client", "private"
_CONNECT_PATIENCE = 15.0  # seconds to reach an owner that holds the lock before indexing privately
_STORE_WAIT = 10.0  # a new owner waits this long for the previous owner's shard lock to go
_CALL_ATTEMPTS = 4  # owners lost in a row before a call fails (each loss ends in a takeover)


class SharedIndex:
    def __init__(
        self,
        root: Path,
        settings: Settings,
        on_change: Callable[[], None] | None = None,
        on_role: Callable[[str], None] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.settings_error: str | None = None
        self.settings_warnings: list[str] = []  # shown in the status (e.g. ignored workspace keys)
        self._on_change = on_change
        self._on_role = on_role or (lambda _role: None)
        self.role: str | None = None
        self.service: IndexService | None = None
        self._server: OwnerServer | None = None
        self._client: OwnerClient | None = None
        self._lock: OwnerLock | None = None
        self._where: Rendezvous | None = None
        self._switch = threading.Lock()
        self._generation = 0
        self._closed = False
        self.takeovers = 0
        self.last_takeover_s: float | None = None
        # This process's own editor buffers, re-sent to whichever process owns the index.
        self._docs: dict[str, str] = {}
        self._docs_lock = threading.Lock()
        self._doc_jobs: queue.Queue[tuple[str, str, str | None] | None] = queue.Queue()
        self._doc_thread = threading.Thread(target=self._send_documents, name="ragls-docs", daemon=True)
        self._doc_thread.start()

    # -- lifecycle ---------------------------------------------------------------------------
    def open(self) -> str:
        """Become the owner or a client of the owner; returns the role."""
        with self._switch:
            try:
                self._where = rendezvous(self.root, self.settings)
                self._lock = OwnerLock(self._where.lock)
            except OSError as exc:  # e.g. a cache directory of another user: no sharing, still an index
                log.warning("cannot share the index of %s with other processes: %s", self.root, exc)
                self._become_private()
            else:
                self._attach()
        return self.role or PRIVATE

    def close(self, timeout: float = 1.5) -> None:
        with self._switch:
            self._closed = True
            self._doc_jobs.put(None)
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._server is not None:
                # Clients first: they see EOF and wait for the lock, so no request of theirs
                # reaches a stopping index.
                self._server.close()
                self._server = None
            if self.service is not None:
                # Stop the index before the lock goes, so the next owner finds the shard free.
                self.service.stop(timeout)
            if self._lock is not None:
                self._lock.release()

    def restart(self, settings: Settings) -> None:
        """New settings: an owner rebuilds its index service; a client keeps the owner's."""
        with self._switch:
            self.settings = settings
            if self.role not in (OWNER, PRIVATE) or self.service is None:
                return
            # The old worker closes the store after its batch; the new one opens the same slot
            # once that happened (it waits in its own thread), never an alt-N one.
            closed = self.service.stop(10.0)
            self._start_service(store_wait=_STORE_WAIT if self.role == OWNER else 0.0, after=closed)

    def _attach(self) -> None:
        """Owner, client or (as a last resort) a private index. Caller holds `_switch`."""
        assert self._lock is not None and self._where is not None
        deadline = time.monotonic() + _CONNECT_PATIENCE
        while True:
            if self._lock.try_acquire():
                self._become_owner()
                return
            client: OwnerClient | None = None
            try:
                client = OwnerClient(self._where.socket, on_lost=self._lost_callback(self._generation))
                hello = OwnerHello.model_validate(client.call("rag/hello", {}, timeout=10))
                if Path(hello.workspace) != self.root:
                    raise OSError(f"the owner socket serves {hello.workspace}, not {self.root}")
            except (OSError, RemoteError, TimeoutError, ValueError) as exc:
                if client is not None:
                    client.close()  # without its lost-callback: it must not trigger a takeover later
                if time.monotonic() >= deadline:
                    # A process holds the lock but never answers (hung, or an incompatible
                    # ragls): index privately, as before shared indexes existed.
                    log.warning("cannot reach the owner of %s (%s); using a separate index", self.root, exc)
                    self._become_private()
                    return
                time.sleep(0.05)
                continue
            self._client = client
            self._set_role(CLIENT)
            log.info("using the index of ragls process %d for %s", hello.pid, self.root)
            with self._docs_lock:
                docs = dict(self._docs)
            for rel, text in docs.items():
                self._doc_jobs.put(("open", rel, text))
            return

    def _become_owner(self) -> None:
        assert self._where is not None
        self._start_service(store_wait=_STORE_WAIT)
        try:
            self._server = OwnerServer(self._where.socket, self._handlers(), on_disconnect=self._client_left)
            self._server.start()
        except OSError as exc:  # still an index for this process; others fall back privately
            log.warning("cannot serve the index to other processes: %s", exc)
        self._set_role(OWNER)

    def _become_private(self) -> None:
        self._start_service(store_wait=0.0)
        self._set_role(PRIVATE)

    def _start_service(self, store_wait: float, after: threading.Event | None = None) -> None:
        self.service = IndexService(
            self.root,
            self.settings,
            on_change=self._on_change,
            store_wait=store_wait,
            after=after,
            warnings=self.settings_warnings,
        )
        self.service.settings_error = self.settings_error
        self.service.start()
        with self._docs_lock:
            docs = dict(self._docs)
        for rel, text in docs.items():
            self.service.open_document(rel, text, LOCAL)

    def _set_role(self, role: str) -> None:
        self.role = role
        self._generation += 1
        self._on_role(role)
        if self._on_change is not None:
            self._on_change()

    def _lost_callback(self, generation: int) -> Callable[[], None]:
        def lost() -> None:
            threading.Thread(target=self._take_over, args=(generation,), name="ragls-takeover", daemon=True).start()

        return lost

    def _take_over(self, generation: int) -> None:
        t0 = time.monotonic()
        with self._switch:
            if self._closed or generation != self._generation - 1 or self.role != CLIENT:
                return  # already handled by another thread, or closing
            log.info("the owner of %s went away; taking over or reconnecting", self.root)
            if self._client is not None:
                self._client.close()
                self._client = None
            self._attach()
            self.takeovers += 1
            self.last_takeover_s = time.monotonic() - t0

    def _client_call(self, method: str, params: dict[str, Any], timeout: float = 120.0) -> Any:
        """Call the owner; if it is gone, wait for the takeover and try again. More than once:
        under load, the connection made by the takeover right after a kill -9 of the owner was
        seen to be lost as well (tests/e2e/test_mcp.py, about one run in ten); each loss ends
        in another takeover, so a few attempts reach the owner that stays."""
        for attempt in range(_CALL_ATTEMPTS):
            with self._switch:
                client, role, gen = self._client, self.role, self._generation
            if role != CLIENT or client is None:
                return None  # became the owner meanwhile: the caller answers locally
            try:
                return client.call(method, params, timeout)
            except OwnerGone:
                if attempt == _CALL_ATTEMPTS - 1:
                    raise
                log.info("the owner of %s went away during %s; retrying (%d)", self.root, method, attempt + 1)
                self._take_over(gen - 1)
        return None

    # -- the owner's socket handlers ---------------------------------------------------------
    def _handlers(self) -> dict[str, Any]:
        def svc() -> IndexService:
            assert self.service is not None
            return self.service

        def retrieve(params: dict[str, Any], _cid: str) -> RetrieveResultOut:
            try:
                return svc().retrieve(RetrieveParams.model_validate(params))
            except QueryError as exc:
                raise InvalidParams(str(exc)) from exc

        def open_doc(params: dict[str, Any], cid: str) -> dict[str, Any]:
            p = DocumentParams.model_validate(params)
            if p.text is None:
                raise InvalidParams("text: Field required")
            svc().open_document(_safe_rel(p.path), p.text, cid)
            return {}

        def close_doc(params: dict[str, Any], cid: str) -> dict[str, Any]:
            svc().close_document(_safe_rel(DocumentParams.model_validate(params).path), cid)
            return {}

        def reindex(params: dict[str, Any], _cid: str) -> dict[str, Any]:
            return {"started": svc().reindex(ReindexParams.model_validate(params).full)}

        def answered(handler: Any) -> Any:
            """A question from a client process: the indexer's store writes wait meanwhile."""

            def run(params: dict[str, Any], cid: str) -> Any:
                with FOREGROUND.request():
                    return handler(params, cid)

            return run

        return {
            "rag/hello": lambda _p, _c: OwnerHello(workspace=str(self.root), version=__version__, pid=os.getpid()),
            "rag/indexStatus": answered(lambda _p, _c: StatusEnvelope(status=svc().status(), runs=svc().runs)),
            "rag/retrieve": answered(retrieve),
            "rag/findSymbol": answered(lambda p, _c: svc().find_symbol(SymbolParams.model_validate(p))),
            "rag/reindex": reindex,
            "rag/openDocument": open_doc,
            "rag/closeDocument": close_doc,
        }

    def _client_left(self, cid: str) -> None:
        if self.service is not None:
            self.service.close_source(cid)

    # -- what faces call (thread-safe, blocking) ---------------------------------------------
    def status(self) -> tuple[IndexStatus, int]:
        """The index status and the number of index runs started (for progress reporting)."""
        raw = self._client_call("rag/indexStatus", {}, timeout=30)
        if raw is not None:
            env = StatusEnvelope.model_validate(raw)
            return env.status, env.runs
        assert self.service is not None
        return self.service.status(), self.service.runs

    def retrieve(self, p: RetrieveParams) -> RetrieveResultOut:
        """Raises QueryError for bad input (globs)."""
        try:
            raw = self._client_call("rag/retrieve", p.model_dump(by_alias=True, exclude_unset=True))
        except RemoteError as exc:
            if exc.code == INVALID_PARAMS:
                raise QueryError(str(exc)) from exc
            raise
        if raw is not None:
            return RetrieveResultOut.model_validate(raw)
        assert self.service is not None
        return self.service.retrieve(p)

    def find_symbol(self, p: SymbolParams) -> RetrieveResultOut:
        raw = self._client_call("rag/findSymbol", p.model_dump(by_alias=True, exclude_none=True))
        if raw is not None:
            return RetrieveResultOut.model_validate(raw)
        assert self.service is not None
        return self.service.find_symbol(p)

    def reindex(self, full: bool = False) -> bool:
        raw = self._client_call("rag/reindex", {"full": full})
        if raw is not None:
            return bool(raw.get("started"))
        assert self.service is not None
        return self.service.reindex(full)

    def open_document(self, rel: str, text: str) -> None:
        """Non-blocking; buffers reach the owner in the order they were changed."""
        with self._docs_lock:
            self._docs[rel] = text
        self._doc_jobs.put(("open", rel, text))

    def close_document(self, rel: str) -> None:
        with self._docs_lock:
            had = self._docs.pop(rel, None) is not None
        if had:
            self._doc_jobs.put(("close", rel, None))

    def _send_documents(self) -> None:
        while (job := self._doc_jobs.get()) is not None:
            kind, rel, text = job
            try:
                with self._switch:
                    service = self.service if self.role in (OWNER, PRIVATE) else None
                if service is not None:
                    if kind == "open":
                        service.open_document(rel, text or "", LOCAL)
                    else:
                        service.close_document(rel, LOCAL)
                    continue
                method = "rag/openDocument" if kind == "open" else "rag/closeDocument"
                params = {"path": rel, "text": text} if kind == "open" else {"path": rel}
                self._client_call(method, params, timeout=30)
            except Exception as exc:  # the takeover re-sends every open buffer anyway
                log.warning("could not pass %s of %s to the index owner: %s", kind, rel, exc)


def _safe_rel(rel: str) -> str:
    """Owner-socket paths are workspace-relative POSIX paths, never absolute or climbing out."""
    parts = rel.replace("\\", "/").split("/")
    if rel.startswith("/") or ".." in parts or "" in parts or "." in parts:
        raise InvalidParams(f"path: {rel!r} must be a workspace-relative path")
    return rel
