"""One workspace folder at run time: the one object between the front ends and its index.

A `Folder` holds what the client calls it, its merged settings, its index (`SharedIndex`: in
this process, or the owner's through the owner socket) and when that index can answer. Every
question to the folder goes through `ask`: the one wait for an index that is still opening and
the one place where a failure becomes an answer that says why (`protocol.unanswered`); the
index below raises or answers, it never re-checks. `status` is the folder's `rag/indexStatus`
entry, live or, for `ragls status`, at rest (read from the index on disk when no ragls process
owns the folder). `WorkspaceFolders` (workspace/open_folders.py) opens and closes folders;
`WorkspaceIndex` (workspace/index.py) routes, waits for the start and fuses several folders.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # they load after `initialize` is answered (the server's start-up)
    from ragls.config import Settings
    from ragls.protocol import IndexStatus, StatusEnvelope
    from ragls.sharing.api import Method
    from ragls.sharing.shared_index import SharedIndex

log = logging.getLogger("ragls")

OPEN_WAIT = 30.0  # seconds a question waits for a folder's index to open its store
NOTHING_YET = "indexing has just started: nothing in this workspace is searchable yet (rag/indexStatus shows it)"


@dataclass(eq=False)
class Folder:
    name: str  # the client's name for it (else the directory's), unique in the workspace
    uri: str  # as the client sent it, so clients can match it
    path: Path  # resolved
    nested_in: str | None = None  # the folder that contains and indexes it
    _settings: Settings | None = field(default=None, repr=False)
    settings_error: str | None = None  # no layer of the settings could be used (defaults apply)
    warnings: list[str] = field(default_factory=list)  # e.g. keys the workspace file may not set
    shared: SharedIndex | None = None  # its index, once opened (None: never, closed or nested)
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # set once its store is open
    removed: bool = False
    opening: bool = False  # its index is being opened (start-up and a folder change may overlap)
    fresh: bool | None = None  # no index of it exists here yet (None: not looked at since its settings were set)

    @property
    def settings(self) -> Settings:
        """The folder's merged settings; the defaults until the server has resolved its layers."""
        if self._settings is None:
            from ragls.config import Settings

            self._settings = Settings()
        return self._settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self._settings = value
        self.fresh = None  # another cache or store may hold its index

    async def new_here(self) -> bool:
        """No index of this folder exists here (with any model): nothing in it can be found until
        its first files are stored, so a question need not wait for its index to open. Looked
        at once (again after a settings change); false from the moment its index has opened."""
        if self.fresh is None:
            from ragls.store import never_indexed

            self.fresh = await asyncio.to_thread(never_indexed, self.path, self.settings)
        return self.fresh

    @property
    def role(self) -> str | None:
        """How its index is served: owner, client, private; None while it has none."""
        return self.shared.role if self.shared is not None else None

    # -- opening and closing ------------------------------------------------------------------
    async def open(self, changed: asyncio.Event, loaded: Callable[..., Awaitable[None]]) -> None:
        """Open its index (owner at once, or a client of the folder's owner); `changed` is set
        at every change of it. A folder removed (or covered) meanwhile closes it again."""
        # Imported off the event loop (requests keep being answered), usually already loaded.
        await loaded("ragls.sharing.shared_index", "ragls.private", "ragls.store")
        from ragls.private import secure_cache
        from ragls.sharing.shared_index import SharedIndex

        loop = asyncio.get_running_loop()
        self.ready = ready = asyncio.Event()

        def opened() -> None:
            ready.set()
            self.fresh = False  # from now on a reopening (new settings) has its files

        def on_change() -> None:
            loop.call_soon_threadsafe(changed.set)
            if not shared.opening:
                loop.call_soon_threadsafe(opened)

        # A cache left readable by others (an older ragls, made by hand) is closed up first;
        # the warning stays in this folder's status.
        if fixed := await asyncio.to_thread(secure_cache, self.settings, self.path):
            self.warnings = [*self.warnings, *fixed]
        await self.new_here()
        shared = SharedIndex(
            self.path, self.settings, on_change, settings_error=self.settings_error, warnings=self.warnings
        )
        await asyncio.to_thread(shared.open)
        if self.removed or self.nested_in is not None:
            await asyncio.to_thread(shared.close)
            return
        self.shared = shared
        changed.set()

    def detach(self) -> SharedIndex | None:
        """Stop answering from its index; the caller closes what is returned (its files stay)."""
        shared, self.shared = self.shared, None
        return shared

    # -- questions ----------------------------------------------------------------------------
    async def ask(self, method: Method, params: Any, what: str | None = None) -> Any:
        """The folder's answer to `method`, once an index still opening is ready (30 s at most;
        at once, empty with a notice, for an index made new by this opening). Anything that stops an answer (no index, the owner gone mid-request, a store failure)
        is an answer that says so; only the caller's mistakes (InvalidParams) raise."""
        from ragls.protocol import unanswered
        from ragls.sharing.api import InvalidParams

        shared = self.shared
        if shared is None:
            return unanswered(method.result, self.settings_error or "indexing has not started")
        if shared.opening:
            if self.fresh:
                # A new index has nothing stored until its first files: waiting for it to open
                # would only delay the same empty answer.
                return unanswered(method.result, NOTHING_YET, notice=True)
            # Waited on the event loop, not in a pool thread: early requests cannot starve the pool.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ready.wait(), OPEN_WAIT)
        try:
            return await asyncio.to_thread(shared.call, method, params)
        except InvalidParams:
            raise
        except Exception as exc:
            log.error("%s failed in %s: %s", method.name, self.path, exc)
            return unanswered(method.result, f"{what or method.name} failed: {exc}")

    async def status(self, at_rest: bool = False) -> StatusEnvelope:
        """Its status and count of index runs: its index's (this process's or the owner's);
        without one, the starting status (or why it cannot start), or with `at_rest` what the
        folder's owner process or the index on disk says."""
        from ragls.protocol import StatusEnvelope
        from ragls.status import starting_status

        shared = self.shared
        if shared is None:
            if at_rest:
                from ragls.workspace.at_rest import status_at_rest

                st = await asyncio.to_thread(status_at_rest, self.path, self.settings, self.warnings)
                return StatusEnvelope(status=st, runs=0)
            why = self.settings_error or (None if self.path.is_dir() else f"{self.path} is not a folder")
            st = starting_status(self.path, self.settings, why)
            st.warnings = list(self.warnings)
            return StatusEnvelope(status=st, runs=0)
        try:
            env: StatusEnvelope = await asyncio.to_thread(shared.status)
        except Exception as exc:  # the owner vanished and no successor answered yet, or hangs
            return StatusEnvelope(status=starting_status(self.path, self.settings, f"index unavailable: {exc}"), runs=0)
        st = env.status
        self._add_own_notes(st)
        return env

    def _add_own_notes(self, st: IndexStatus) -> None:
        """A client's status is the owner's: this process's own settings problems are added."""
        if st.message is None and self.settings_error:
            st.message = self.settings_error
        if not st.warnings:
            st.warnings = list(self.warnings)
