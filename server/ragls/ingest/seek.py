"""Asked-for first: while a lexical pass runs, a question that names code (an identifier, a
qualified name) sends the files still waiting that spell that name to the front of the queue,
so the definition is searchable a batch later instead of at the end of the pass (issue 19: a
symbol in a 10,000-file repository is found in seconds wherever its file is).

The search is a plain case-insensitive byte search over the waiting files, in a thread of its
own at the indexer's niceness; the request that asked never waits for it. Each name is sought
once per pass."""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from ragls.system.threads import lower_priority
from ragls.system.untrusted_files import read_bounded

log = logging.getLogger(__name__)

# Files sent ahead per name: the ones that spell it most often (a definition file usually
# names its function more than once; a common name must not reorder the whole pass).
MAX_FILES_PER_NAME = 16


def bare_name(name: str) -> str:
    """`invoice.compute_total` -> `compute_total`: the part a file spells as it is."""
    return name.replace("::", ".").replace("#", ".").rstrip("(").strip(".").rsplit(".", 1)[-1]


def files_naming(
    root: Path, paths: Iterable[str], names: list[str], max_bytes: int, limit: int = MAX_FILES_PER_NAME
) -> list[str]:
    """Of `paths` (relative to `root`), up to `limit` per name that contain it (any case), those
    spelling it most often first. Unreadable files are passed over: the pass reports them."""
    wanted = sorted({bare_name(n).lower().encode() for n in names} - {b""})
    if not wanted:
        return []
    counts: dict[bytes, list[tuple[int, str]]] = {w: [] for w in wanted}
    base = str(root)
    for rel in paths:
        data = _read_regular(os.path.join(base, rel), max_bytes)
        if data is None:
            continue
        data = data.lower()
        for w in wanted:
            if (n := data.count(w)) > 0:
                counts[w].append((n, rel))
    out: dict[str, None] = {}
    for w in wanted:
        for _, rel in sorted(counts[w], key=lambda t: (-t[0], t[1]))[:limit]:
            out[rel] = None
    return list(out)


def _read_regular(path: str, max_bytes: int) -> bytes | None:
    """The head of a regular file, or None. A waiting file may have been replaced since discovery
    (by a FIFO that would block the read, by a link): those are left to the pass, which checks."""
    try:
        return read_bounded(path, max_bytes)
    except OSError:
        return None


class Seeker:
    """Finds waiting files that name what was asked, and hands them to `prioritize`."""

    def __init__(
        self,
        root: Path,
        max_bytes: int,
        waiting: Callable[[], list[str]],
        prioritize: Callable[[list[str]], None],
        generation: Callable[[], int],
        nice: int = 0,
    ) -> None:
        self._root = root
        self._max_bytes = max_bytes
        self._waiting = waiting  # the files not yet indexed, now
        self._prioritize = prioritize
        self._generation = generation  # changes when a new pass starts: names are sought again
        self._nice = nice
        self._sought: set[tuple[int, str]] = set()
        self._queue: queue.SimpleQueue[list[str] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.searches = 0  # for tests: searches run

    def seek(self, names: Iterable[str]) -> None:
        """Queue the names not sought yet in this pass; returns at once."""
        gen = self._generation()
        with self._lock:
            new = [n for n in (bare_name(x) for x in names) if len(n) >= 3 and (gen, n.lower()) not in self._sought]
            if not new:
                return
            self._sought.update((gen, n.lower()) for n in new)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ragls-seek", daemon=True)
                self._thread.start()
        self._queue.put(new)

    def stop(self) -> None:
        self._queue.put(None)

    def _run(self) -> None:
        lower_priority(self._nice)
        while True:
            names = self._queue.get()
            if names is None:
                return
            while True:  # everything asked meanwhile goes in the same walk
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    return
                names += more
            try:
                waiting = self._waiting()
                if not waiting:
                    continue
                self.searches += 1
                found = files_naming(self._root, waiting, names, self._max_bytes)
                if found:
                    log.info("asked for %s: %d waiting files sent ahead", ", ".join(names), len(found))
                    self._prioritize(found)
            except Exception:  # a failed search only loses the head start, never the answer
                log.exception("seeking %s failed", names)
