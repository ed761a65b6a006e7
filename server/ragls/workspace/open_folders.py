"""The workspace's folders at run time: each folder's settings (the client's layers over the user
file and the folder's `.ragls.toml`) and its index (workspace/folder.py), opened, reloaded and closed
as the workspace changes. `WorkspaceIndex` (workspace/index.py) answers the index API over them;
front ends use that one object."""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls.workspace.folder import Folder
from ragls.workspace.folders import Folders

if TYPE_CHECKING:
    from ragls.config import Settings

log = logging.getLogger("ragls")

NO_FOLDER = "no workspace folder: open a folder to index it"


async def import_off_loop(*names: str) -> None:
    """Import modules not loaded yet in a thread: the event loop keeps answering meanwhile."""
    if missing := [n for n in names if n not in sys.modules]:
        await asyncio.to_thread(lambda: [importlib.import_module(n) for n in missing])


class WorkspaceFolders:
    def __init__(
        self,
        on_settings_error: Callable[[str], None] | None = None,
        loaded: Callable[..., Awaitable[None]] = import_off_loop,
    ) -> None:
        self.folders = Folders()
        # Client settings layers (name, dict), later wins, over defaults < user file < .ragls.toml.
        self.layers: list[tuple[str, Any]] = []
        self.settings_error: str | None = None  # the workspace has no folder to index
        self.started = asyncio.Event()  # set once indexing starts (or cannot)
        self.changed = asyncio.Event()  # set whenever an index changes (progress reporting)
        self._on_settings_error = on_settings_error or (lambda message: log.error("%s", message))
        self._shown_errors: set[str] = set()  # settings errors shown since the settings last changed
        self._tasks: set[asyncio.Task[None]] = set()  # folders being opened in the background
        # Awaited before a module is first used on the loop (the language server imports them
        # in a thread at start-up: an import on the loop would wait for that one's lock).
        self._loaded = loaded

    # -- folders and their settings ----------------------------------------------------------
    @property
    def root(self) -> Path | None:
        """The first folder (the status's `workspace`)."""
        return self.folders.items[0].path if self.folders.items else None

    @property
    def settings(self) -> Settings:
        """The first folder's settings: they size a multi-folder answer (topK, maxChars)."""
        if self.folders.items:
            return self.folders.items[0].settings
        from ragls.config import Settings

        return Settings()

    def add(self, uri: str, name: str | None = None) -> Folder | None:
        """A folder by URI (call `folders.renest()` once all are added)."""
        return self.folders.add(uri, name)

    def add_path(self, path: Path, name: str | None = None) -> Folder | None:
        return self.folders.add(path.resolve().as_uri(), name)

    def load_settings(self, f: Folder) -> None:
        """Merge the layers for a folder (its own .ragls.toml); on a bad value fall back to fewer
        client layers, then to defaults and the folder file, as a typo must not stop indexing.
        A layer that fails is reported once (`on_settings_error`) and kept in `f.settings_error`
        when no layer could be used."""
        from ragls.config import SettingsError, resolve_settings

        first_error: str | None = None
        for n in range(len(self.layers), -1, -1):
            try:
                resolved = resolve_settings(f.path, *self.layers[:n])
            except SettingsError as exc:
                if first_error is None:
                    first_error = str(exc)
                    if first_error not in self._shown_errors:  # once, not once per folder
                        self._shown_errors.add(first_error)
                        self._on_settings_error(first_error)
                continue
            f.settings, f.warnings = resolved.settings, resolved.warnings
            f.settings_error = None
            break
        else:
            f.settings_error = first_error
        if f.shared is not None:
            f.shared.settings_warnings = f.warnings

    def load_all_settings(self) -> None:
        self._shown_errors.clear()
        for f in self.folders.items:
            self.load_settings(f)

    async def reload_settings(self) -> None:
        """The client's settings changed: retrieval settings apply to the next request; anything
        else restarts the folder's index."""
        self._shown_errors.clear()
        for f in self.folders.items:
            old = f.settings
            self.load_settings(f)
            keep = {"retrieval", "log_level"}
            if old.model_dump(exclude=keep) != f.settings.model_dump(exclude=keep) and f.shared is not None:
                log.info("settings changed: restarting the indexer of %s", f.path)
                await asyncio.to_thread(f.shared.restart, f.settings)

    # -- opening and closing indexes ---------------------------------------------------------
    async def start(self) -> None:
        """Open the index of every indexed folder that has none yet (concurrently)."""
        todo = [f for f in self.folders.indexed if f.shared is None and f.path.is_dir()]
        try:
            await asyncio.gather(*(self.open_folder(f) for f in todo))
        finally:
            self.started.set()

    async def open_folder(self, f: Folder) -> None:
        if f.shared is not None or f.opening:
            return
        f.opening = True
        try:
            await f.open(self.changed, self._loaded)
        except Exception as exc:  # the folder answers with this error; the others go on
            log.exception("cannot open the index of %s", f.path)
            f.settings_error = f"cannot open the index of {f.path}: {exc}"
        finally:
            f.opening = False

    def open_in_background(self, f: Folder) -> None:
        task = asyncio.get_running_loop().create_task(self.open_folder(f))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close_folder(self, f: Folder, timeout: float = 1.5) -> None:
        """Stop searching a folder; its index stays on disk for the next time it is opened."""
        if (shared := f.detach()) is not None:
            await asyncio.to_thread(shared.close, timeout)
        self.changed.set()

    def close(self, timeout: float = 1.5) -> None:
        """Close every folder's index (blocking)."""
        for f in self.folders.items:
            if (shared := f.detach()) is not None:
                shared.close(timeout)

    async def change_folders(self, added: list[tuple[str, str | None]], removed: list[str]) -> list[Folder]:
        """Removed folders are no longer searched (their index is closed, kept on disk); added
        ones are indexed in the background; a folder that became nested (or no longer is)
        follows. Returns the folders added."""
        gone = [f for uri in removed if (f := self.folders.remove(uri)) is not None]
        new = [f for uri, name in added if (f := self.folders.add(uri, name)) is not None]
        before = {f.name: f.nested_in for f in self.folders.items}
        self.folders.renest()
        self.settings_error = None if self.folders.items else NO_FOLDER
        for f in new:
            self.load_settings(f)
        covered = [f for f in self.folders.items if f.nested_in is not None and f.shared is not None]
        await asyncio.gather(*(self.close_folder(f) for f in [*gone, *covered]))
        if not self.started.is_set():
            return new  # still starting up: `start` opens every folder then
        if not self.settings.indexing.auto_index and not any(f.shared for f in self.folders.items):
            return new
        for f in self.folders.indexed:  # added, or uncovered by a removal (`before` was nested)
            if f.shared is None and f.path.is_dir() and (f in new or before.get(f.name) is not None):
                self.open_in_background(f)
        return new

    def roles(self) -> list[str]:
        """How each indexed folder's index is served: owner, client or private."""
        return [f.role or "" for f in self.folders.indexed if f.shared is not None]
