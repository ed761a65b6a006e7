"""The worker's inbox: scans, changed paths, wake-ups and stop, and the edits other threads ask
of the index state (`state.Edit`: open buffers, asked-for files, a retry, an error), which only
the worker applies. Jobs are drained and coalesced before each step, so a burst of 5,000
changes is one batch and a scan covers every path; edits are taken between steps and at every
batch boundary of a pass."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from ragls.index.state import Edit


@dataclass
class Jobs:
    """One coalesced drain of the queue."""

    scan: bool = False
    full: bool = False
    paths: set[str] = field(default_factory=set)


class JobQueue:
    """Jobs and edits from any thread, taken by the worker. The condition's lock is held only
    to append or take (never across a step), so a status read never waits on the worker."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._items: deque[tuple[str, object]] = deque()
        self._stop = threading.Event()
        self._edits: deque[Edit] = deque()  # appended by any thread, taken by the worker
        # A job was posted that the last published status may not show yet (`settled`).
        self._unpublished = False
        # Retries asked for, and the number the last published status has seen (`retrying`).
        self._retries_posted = 0
        self._retries_taken = 0  # the worker's count, published by `published`
        self._retries_seen = 0

    def _put(self, kind: str, arg: object) -> None:
        with self._cond:
            self._items.append((kind, arg))
            self._unpublished = True
            self._cond.notify()

    # -- any thread ---------------------------------------------------------------------------
    def scan(self, full: bool = False) -> None:
        self._put("scan", full)

    def paths(self, paths: set[str]) -> None:
        self._put("paths", paths)

    def buffer(self, rel: str, text: str | None) -> None:
        """An editor buffer's text (None: closed): the worker takes it, then indexes `rel`."""
        self._edits.append(Edit("buffer", rel, text))
        self._put("paths", {rel})

    def urgent(self, paths: Iterable[str]) -> None:
        """Files a question named: a running pass indexes them at its next batch boundary."""
        self._edits.append(Edit("urgent", paths=tuple(paths)))

    def retry(self) -> None:
        """A user's retry: a waiting fault is due at once."""
        with self._cond:
            self._retries_posted += 1
        self._edits.append(Edit("retry"))
        self.wake()

    def error(self, path: str, message: str) -> None:
        """An error another thread met (loading the model, say), for the status."""
        self._edits.append(Edit("error", path, message))

    def wake(self) -> None:
        """Let a sleeping worker look again (a retry asked for by the user)."""
        self._put("wake", None)

    def stop(self) -> None:
        self._stop.set()
        self._put("stop", None)

    def stopping(self) -> bool:
        return self._stop.is_set()

    def sleep(self, seconds: float) -> bool:
        """Wait `seconds` unless asked to stop meanwhile; True when stopping."""
        return self._stop.wait(seconds)

    def empty(self) -> bool:
        return not self._items

    def settled(self) -> bool:
        """Nothing posted that the last published status does not show."""
        with self._cond:
            return not self._unpublished

    def retrying(self) -> bool:
        """A retry was asked for that the last published status does not show yet."""
        with self._cond:
            return self._retries_posted > self._retries_seen

    def interrupted(self) -> bool:
        """Should a long step give way: jobs are waiting, or the worker stops?"""
        return bool(self._items) or self._stop.is_set()

    # -- the worker ---------------------------------------------------------------------------
    def edits(self) -> list[Edit]:
        """Take the edits posted so far, oldest first."""
        out: list[Edit] = []
        while self._edits:
            out.append(self._edits.popleft())
        self._retries_taken += sum(1 for e in out if e.kind == "retry")
        return out

    def published(self) -> None:
        """The worker published a status that shows every job and edit it has taken."""
        with self._cond:
            if not self._items and not self._edits:
                self._unpublished = False
            self._retries_seen = self._retries_taken

    def drain(self, block: bool) -> Jobs:
        jobs = Jobs()
        with self._cond:
            if block and not self._items:
                self._cond.wait(0.5)
            items = list(self._items)
            self._items.clear()
        for kind, arg in items:
            if kind == "scan":
                jobs.scan = True
                jobs.full = jobs.full or bool(arg)
            elif kind == "paths":
                jobs.paths |= arg  # type: ignore[arg-type]
        if jobs.scan:
            jobs.paths.clear()  # a scan covers every path
        return jobs
