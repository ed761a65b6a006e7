"""Requests first: background work yields the GIL to requests being answered.

The indexer's store writes are GIL-bound native calls (Qdrant Edge converts and applies points
holding it, ~5 ms per slice of 64 points), and a request answered meanwhile waits behind every
slice the indexer starts. Requests mark themselves here while they run; between two such steps,
background threads call `yield_to_requests`, which waits (the GIL released) until no request is
in flight, for at most a short while so that a stream of requests cannot starve indexing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# Longest a background step waits for requests: a request takes a few ms; a client that sends
# them back to back still leaves the indexer this much of every such wait.
MAX_WAIT_S = 0.05


class Foreground:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._running = 0
        self.yields = 0  # background steps that waited for a request (tests, benchmarks)

    @property
    def busy(self) -> bool:
        return self._running > 0

    @contextmanager
    def request(self) -> Iterator[None]:
        """Mark the block as a request being answered."""
        with self._cond:
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                if not self._running:
                    self._cond.notify_all()

    def yield_to_requests(self, max_wait: float = MAX_WAIT_S) -> None:
        """Between two GIL-holding steps of background work: let waiting threads run, and while a
        request is in flight wait for it to end (at most `max_wait`)."""
        if not self._running:
            time.sleep(0)  # a thread waiting for the GIL gets it now, not after the next step
            return
        self.yields += 1
        with self._cond:
            self._cond.wait_for(lambda: not self._running, max_wait)


FOREGROUND = Foreground()
