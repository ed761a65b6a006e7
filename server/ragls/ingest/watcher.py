"""Watch the workspace with watchfiles, in a process of its own (ingest/watch_process.py: its
native setup holds the GIL); hand debounced, coalesced, ignore-filtered batches of changed paths
to a callback. Falls back to polling when inotify runs out of watches."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import watchfiles

from ragls.ingest.discovery import IgnoreRules
from ragls.system.child import module_command

log = logging.getLogger(__name__)

_RULE_FILES = (".gitignore", ".ragignore")


class _Until:
    """When a watch ends (checked every 50 ms while its process is read): on stop, on a restart request,
    or when the root directory was replaced (the old watch would be deaf from then on)."""

    def __init__(self, watcher: Watcher) -> None:
        self.w = watcher
        self._next_check = 0.0

    def is_set(self) -> bool:
        if self.w._stop.is_set() or self.w._restart.is_set():
            return True
        now = time.monotonic()
        if now >= self._next_check:
            self._next_check = now + 1.0
            if _inode(self.w.root) != self.w._ino:
                log.warning("the workspace folder was replaced; restarting the file watcher")
                self.w._restart.set()
                return True
        return False


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


class Watcher:
    """Supervised: the watch is restarted when it fails or goes deaf (the root replaced), with
    polling after repeated failures; `watching` says whether changes are seen right now."""

    def __init__(
        self,
        root: Path,
        rules: IgnoreRules,
        on_changes: Callable[[set[str]], None],
        debounce_ms: int,
        on_restart: Callable[[], None] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.rules = rules
        self.on_changes = on_changes
        # Called once a restarted watch is set up: whatever changed while nobody watched is for
        # a scan to pick up (a scan started earlier could miss what changed before then).
        self.on_restart = on_restart or (lambda: None)
        self.debounce_ms = max(debounce_ms, 1)
        self._stop = threading.Event()
        self._restart = threading.Event()
        self.ready = threading.Event()  # the current watch sees changes (its watches are set up)
        self._thread: threading.Thread | None = None
        self._ino: int | None = None
        self.polling = False
        self.problem: str | None = None  # why changes are not seen right now
        self.restarts = 0

    @property
    def watching(self) -> bool:
        alive = self._thread is not None and self._thread.is_alive()
        return alive and self.ready.is_set() and self.problem is None and not self._restart.is_set()

    def _rel(self, path: str) -> str | None:
        try:
            return (
                Path(path).resolve().relative_to(self.root).as_posix()
                if not Path(path).is_symlink()
                else Path(path).relative_to(self.root).as_posix()
            )
        except ValueError:
            return None

    def _keep(self, change: watchfiles.Change, path: str) -> bool:
        rel = self._rel(path)
        if rel == "." and change == watchfiles.Change.deleted:
            self._restart.set()  # the root itself went away: this watch is deaf from now on
            return False
        if not rel or rel == ".":
            return False
        if rel.rsplit("/", 1)[-1] in _RULE_FILES:
            return True
        if self.rules.ignored_with_parents(rel):
            return False
        # `out/`-style rules match directories only, so ask again as a directory.
        return not (os.path.isdir(path) and self.rules.ignored(rel, is_dir=True))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, name="ragls-watcher", daemon=True)
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        self._stop.set()
        if self._thread is not None and wait:
            self._thread.join(0.5)

    def _supervise(self) -> None:
        force_polling = False
        failures: list[float] = []
        while not self._stop.is_set():
            self._restart.clear()
            self.ready.clear()
            self._ino = _inode(self.root)
            if self._ino is None:
                self.problem = f"the workspace folder {self.root} is missing"
                self._stop.wait(1.0)
                continue
            try:
                self._watch(force_polling)
                self.problem = None if self._stop.is_set() else self.problem
            except Exception as exc:  # never take the server down with the watcher
                self.problem = f"file watching failed: {exc}"
                log.error("%s; restarting it", self.problem)
                now = time.monotonic()
                failures = [t for t in failures if now - t < 60] + [now]
                if not force_polling and (isinstance(exc, OSError) or len(failures) >= 3):
                    log.warning(
                        "falling back to polling (raise fs.inotify.max_user_watches if inotify ran out of watches)"
                    )
                    force_polling = self.polling = True
                self._stop.wait(min(30.0, 0.5 * 2 ** len(failures)))
            if self._stop.is_set():
                return
            self.restarts += 1  # the next watch's readiness calls on_restart
            self.problem = None

    def _watch(self, force_polling: bool) -> None:
        """One watch, in its own process (ingest/watch_process.py), until stopped, restarted or
        failed; its batches are filtered here by the ignore rules."""
        child = subprocess.Popen(
            module_command("ragls.ingest.watch_process"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # an editor's Ctrl-C to the server's group is the server's to handle
        )
        assert child.stdin is not None and child.stdout is not None
        try:
            config = {"root": str(self.root), "debounce_ms": self.debounce_ms, "force_polling": force_polling}
            child.stdin.write(json.dumps(config).encode() + b"\n")
            child.stdin.flush()
            self._read(child)
        finally:
            _end(child)

    def _read(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stdout is not None
        fd = child.stdout.fileno()
        until = _Until(self)
        pending = b""
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not until.is_set():
                if not sel.select(timeout=0.05):
                    continue
                data = os.read(fd, 1 << 16)
                if not data:
                    raise RuntimeError(f"the file watcher process exited ({child.wait()})")
                *lines, pending = (pending + data).split(b"\n")
                for line in lines:
                    self._batch(json.loads(line))

    def _batch(self, message: dict[str, Any]) -> None:
        if "error" in message:
            raise (OSError if message.get("os_error") else RuntimeError)(message["error"])
        if message.get("ready"):
            self.ready.set()
            if self.restarts:
                self.on_restart()
        kept = [path for change, path in message.get("changes", []) if self._keep(watchfiles.Change(change), path)]
        rels = {r for p in kept if (r := self._rel(p))}
        if rels:
            self.on_changes(rels)


def _end(child: subprocess.Popen[bytes]) -> None:
    """Close the watch process's input (it stops), then make sure it is gone."""
    with contextlib.suppress(OSError):
        if child.stdin is not None:
            child.stdin.close()
    try:
        child.wait(1.0)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    if child.stdout is not None:
        child.stdout.close()
