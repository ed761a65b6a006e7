"""A folder's index as every ragls process sees it: owned here, or reached through the owner.

`SharedIndex.open()` takes the folder's owner lock (sharing/owner.py) and runs the index in this process
(`LocalIndex`), serving it on the owner socket (`OwnerServer`); or, when another process holds
the lock, connects to that owner (`OwnerProxy`). Either way it is the same index API (sharing/api.py):
`call` goes to whichever of the two this process has now. When the owner goes away (exit, crash,
kill -9) every client notices the closed socket and races for the lock: one becomes the owner on
the same index directory (the manifest and embedding cache make this a warm start: nothing is
re-embedded), the others connect to it, and each re-sends its own open editor buffers.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ragls.config import Settings
from ragls.protocol import DocumentParams, Empty
from ragls.sharing.api import CLOSE_DOCUMENT, LOCAL, OPEN_DOCUMENT, IndexApi, Method
from ragls.sharing.buffers import Buffers
from ragls.sharing.local_index import LocalIndex
from ragls.sharing.owner import OwnerLock, Rendezvous, rendezvous
from ragls.sharing.owner_rpc import OwnerGone, OwnerProxy, OwnerServer, RemoteError

log = logging.getLogger(__name__)

OWNER, CLIENT, PRIVATE = "owner", "client", "private"
_CONNECT_PATIENCE = 15.0  # seconds to reach an owner that holds the lock before indexing privately
_STORE_WAIT = 10.0  # a new owner waits this long for the previous owner's shard lock to go
_CALL_ATTEMPTS = 4  # owners lost in a row before a call fails (each loss ends in a takeover)


class SharedIndex(IndexApi):
    def __init__(
        self,
        root: Path,
        settings: Settings,
        on_change: Callable[[], None] | None = None,
        on_role: Callable[[str], None] | None = None,
        settings_error: str | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.settings_error = settings_error
        self.settings_warnings = list(warnings or [])  # shown in the status (e.g. ignored workspace keys)
        self._on_change = on_change
        self._on_role = on_role or (lambda _role: None)
        self.role: str | None = None
        self.local: LocalIndex | None = None  # owner or private: the index in this process
        self._proxy: OwnerProxy | None = None  # client: the owner's
        self._server: OwnerServer | None = None
        self._lock: OwnerLock | None = None
        self._where: Rendezvous | None = None
        self._switch = threading.Lock()
        self._generation = 0
        self._closed = False
        self.takeovers = 0
        self.last_takeover_s: float | None = None
        # Every editor buffer of this folder in this process (this process's own under LOCAL;
        # an owner's clients' under their connections), kept across roles.
        self.buffers = Buffers()
        # This process's own buffers reach the index in the order they were changed.
        self._doc_jobs: queue.Queue[tuple[Method, DocumentParams] | None] = queue.Queue()
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
            if self._proxy is not None:
                self._proxy.close()
                self._proxy = None
            if self._server is not None:
                # Clients first: they see EOF and wait for the lock, so no request of theirs
                # reaches a stopping index.
                self._server.close()
                self._server = None
            if self.local is not None:
                # Stop the index before the lock goes, so the next owner finds the shard free.
                self.local.stop(timeout)
            if self._lock is not None:
                self._lock.release()

    def restart(self, settings: Settings) -> None:
        """New settings: an owner rebuilds its index; a client keeps the owner's."""
        with self._switch:
            self.settings = settings
            if self.role not in (OWNER, PRIVATE) or self.local is None:
                return
            # The old worker closes the store after its batch; the new one opens the same slot
            # once that happened (it waits in its own thread), never an alt-N one.
            closed = self.local.stop(10.0)
            self._start_local(store_wait=_STORE_WAIT if self.role == OWNER else 0.0, after=closed)

    @property
    def opening(self) -> bool:
        """This process's own index is still opening its store (questions would wait for it)."""
        local = self.local
        return local is not None and not local.ready

    def _attach(self) -> None:
        """Owner, client or (as a last resort) a private index. Caller holds `_switch`."""
        assert self._lock is not None and self._where is not None
        deadline = time.monotonic() + _CONNECT_PATIENCE
        while True:
            if self._lock.try_acquire():
                self._become_owner()
                return
            proxy: OwnerProxy | None = None
            try:
                proxy = OwnerProxy(self._where.socket, on_lost=self._lost_callback(self._generation))
                hello = proxy.hello()
                if Path(hello.workspace) != self.root:
                    raise OSError(f"the owner socket serves {hello.workspace}, not {self.root}")
            except (OSError, RemoteError, TimeoutError, ValueError) as exc:
                if proxy is not None:
                    proxy.close()  # without its lost-callback: it must not trigger a takeover later
                if time.monotonic() >= deadline:
                    # A process holds the lock but never answers (hung, or an incompatible
                    # ragls): index privately, as before shared indexes existed.
                    log.warning("cannot reach the owner of %s (%s); using a separate index", self.root, exc)
                    self._become_private()
                    return
                time.sleep(0.05)
                continue
            self._proxy = proxy
            self._set_role(CLIENT)
            log.info("using the index of ragls process %d for %s", hello.pid, self.root)
            for rel, text in self.buffers.of(LOCAL).items():  # the new owner has none of ours
                self._doc_jobs.put((OPEN_DOCUMENT, DocumentParams(path=rel, text=text)))
            return

    def _become_owner(self) -> None:
        assert self._where is not None
        self._start_local(store_wait=_STORE_WAIT)
        try:
            self._server = OwnerServer(self._where.socket, self._answer_client, on_disconnect=self._client_left)
            self._server.start()
        except OSError as exc:  # still an index for this process; others fall back privately
            log.warning("cannot serve the index to other processes: %s", exc)
        self._set_role(OWNER)

    def _become_private(self) -> None:
        self._start_local(store_wait=0.0)
        self._set_role(PRIVATE)

    def _start_local(self, store_wait: float, after: threading.Event | None = None) -> None:
        self.local = LocalIndex(
            self.root,
            self.settings,
            self.buffers,  # every buffer opened so far, given to the new index as it starts
            on_change=self._on_change,
            store_wait=store_wait,
            after=after,
            warnings=self.settings_warnings,
            settings_error=self.settings_error,
        )
        self.local.start()

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
            if self._proxy is not None:
                self._proxy.close()
                self._proxy = None
            self._attach()
            self.takeovers += 1
            self.last_takeover_s = time.monotonic() - t0

    # -- the owner's answers to its clients ----------------------------------------------------
    def _answer_client(self, method: Method, params: BaseModel, cid: str) -> BaseModel:
        local = self.local
        if local is None:
            raise OwnerGone("the index is closing")
        return local.call(method, params, cid)  # type: ignore[no-any-return]

    def _client_left(self, cid: str) -> None:
        if self.local is not None:
            self.local.close_source(cid)

    # -- the index API -----------------------------------------------------------------------
    def call(self, method: Method, params: BaseModel, source: str = LOCAL) -> Any:
        """Answered by this process's index or the owner's. This process's own buffers
        (`open_document`/`close_document`) return at once and reach the index in order."""
        if source == LOCAL and method in (OPEN_DOCUMENT, CLOSE_DOCUMENT):
            assert isinstance(params, DocumentParams)
            if method is OPEN_DOCUMENT:
                self.buffers.open(params.path, params.text or "", LOCAL)
            elif not self.buffers.close(params.path, LOCAL):
                return Empty()  # not open here
            self._doc_jobs.put((method, params))
            return Empty()
        return self._forward(method, params, source)

    def _forward(self, method: Method, params: BaseModel, source: str) -> Any:
        """To this process's index, or to the owner; if the owner is gone, wait for the takeover
        and try again. More than once: under load, the connection made by the takeover right
        after a kill -9 of the owner was seen to be lost as well (tests/e2e/test_mcp.py, about
        one run in ten); each loss ends in another takeover, so a few attempts reach the owner
        that stays."""
        for attempt in range(_CALL_ATTEMPTS):
            with self._switch:
                local, proxy, gen = self.local, self._proxy, self._generation
                client = self.role == CLIENT
            api: IndexApi | None = proxy if client else local
            if api is None:
                raise OwnerGone(f"the index of {self.root} is not open")
            try:
                return api.call(method, params, source)
            except OwnerGone:
                if not client or attempt == _CALL_ATTEMPTS - 1:
                    raise
                log.info("the owner of %s went away during %s; retrying (%d)", self.root, method.name, attempt + 1)
                self._take_over(gen - 1)
        raise AssertionError("unreachable")

    def _send_documents(self) -> None:
        while (job := self._doc_jobs.get()) is not None:
            method, params = job
            try:
                self._forward(method, params, LOCAL)
            except OwnerGone:
                if self.role is not None:  # not opened yet: the index takes every buffer as it starts
                    log.warning("could not pass %s of %s to the index: it is closed", method.name, params.path)
            except Exception as exc:  # the takeover re-sends every open buffer anyway
                log.warning("could not pass %s of %s to the index: %s", method.name, params.path, exc)
