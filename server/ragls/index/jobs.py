"""The worker's inbox: scans, changed paths, wake-ups and stop. Jobs are drained and coalesced
before each step, so a burst of 5,000 changes is one batch and a scan covers every path."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field


@dataclass
class Jobs:
    """One coalesced drain of the queue."""

    scan: bool = False
    full: bool = False
    paths: set[str] = field(default_factory=set)


class JobQueue:
    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[str, object]] = queue.Queue()
        self._stop = threading.Event()

    def scan(self, full: bool = False) -> None:
        self._queue.put(("scan", full))

    def paths(self, paths: set[str]) -> None:
        self._queue.put(("paths", paths))

    def wake(self) -> None:
        """Let a sleeping worker look again (a retry asked for by the user)."""
        self._queue.put(("wake", None))

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(("stop", None))

    def stopping(self) -> bool:
        return self._stop.is_set()

    def sleep(self, seconds: float) -> bool:
        """Wait `seconds` unless asked to stop meanwhile; True when stopping."""
        return self._stop.wait(seconds)

    def empty(self) -> bool:
        return self._queue.empty()

    def interrupted(self) -> bool:
        """Should a long step give way: jobs are waiting, or the worker stops?"""
        return not self._queue.empty() or self._stop.is_set()

    def drain(self, block: bool) -> Jobs:
        jobs = Jobs()
        try:
            item = self._queue.get(timeout=0.5) if block else self._queue.get_nowait()
        except queue.Empty:
            return jobs
        while True:
            kind, arg = item
            if kind == "scan":
                jobs.scan = True
                jobs.full = jobs.full or bool(arg)
            elif kind == "paths":
                jobs.paths |= arg  # type: ignore[arg-type]
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
        if jobs.scan:
            jobs.paths.clear()  # a scan covers every path
        return jobs
