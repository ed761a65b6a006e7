"""Watch the workspace with watchfiles; hand debounced, coalesced, ignore-filtered batches
of changed paths to a callback. Falls back to polling when inotify runs out of watches."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from ragls.workspace import IgnoreRules

log = logging.getLogger(__name__)

_RULE_FILES = (".gitignore", ".ragignore")


class Watcher:
    def __init__(
        self, root: Path, rules: IgnoreRules, on_changes: Callable[[set[str]], None], debounce_ms: int
    ) -> None:
        self.root = root.resolve()
        self.rules = rules
        self.on_changes = on_changes
        self.debounce_ms = max(debounce_ms, 1)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.polling = False

    def _rel(self, path: str) -> str | None:
        try:
            return (
                Path(path).resolve().relative_to(self.root).as_posix()
                if not Path(path).is_symlink()
                else Path(path).relative_to(self.root).as_posix()
            )
        except ValueError:
            return None

    def _keep(self, _change: watchfiles.Change, path: str) -> bool:
        rel = self._rel(path)
        if not rel or rel == ".":
            return False
        if rel.rsplit("/", 1)[-1] in _RULE_FILES:
            return True
        if self.rules.ignored_with_parents(rel):
            return False
        # `out/`-style rules match directories only, so ask again as a directory.
        return not (os.path.isdir(path) and self.rules.ignored(rel, is_dir=True))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ragls-watcher", daemon=True)
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        self._stop.set()
        if self._thread is not None and wait:
            self._thread.join(0.5)

    def _run(self) -> None:
        force_polling = False
        while not self._stop.is_set():
            try:
                for changes in watchfiles.watch(
                    self.root,
                    watch_filter=self._keep,
                    debounce=self.debounce_ms,
                    step=50,
                    stop_event=self._stop,
                    force_polling=force_polling,
                    poll_delay_ms=500,
                    raise_interrupt=False,
                    ignore_permission_denied=True,
                ):
                    rels = {r for _, p in changes if (r := self._rel(p))}
                    if rels:
                        self.on_changes(rels)
                return
            except OSError as exc:
                if force_polling:
                    log.error(
                        "file watching failed even when polling: %s; changes are picked up on the next reindex only",
                        exc,
                    )
                    return
                log.warning(
                    "file watching with inotify failed (%s): falling back to polling. Raise "
                    "fs.inotify.max_user_watches to avoid this.",
                    exc,
                )
                force_polling = True
                self.polling = True
            except Exception as exc:  # never take the server down with the watcher
                log.error("file watcher stopped: %s", exc)
                return
