"""The fault model's building blocks (docs/reliability.md): bounded backoff, a worker fault
that says what failed and what happens next, and a circuit breaker per embedding provider.

Every failure the indexer meets ends in one of three places: retried with bounded backoff
while the worker sleeps (no spinning), recorded against the files it hit, or shown as
`state: "error"` with a message naming what failed and when ragls tries again."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime


def wall_clock(monotonic_at: float) -> str:
    """A monotonic deadline as an ISO time a user can read."""
    at = time.time() + (monotonic_at - time.monotonic())
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Backoff:
    """Exponential delays from `base` doubling up to `cap`; `reset` after a success."""

    def __init__(self, base: float, cap: float) -> None:
        self.base, self.cap = base, cap
        self.failures = 0

    def next_delay(self) -> float:
        delay = min(self.cap, self.base * 2 ** min(self.failures, 16))
        self.failures += 1
        return delay

    def reset(self) -> None:
        self.failures = 0


@dataclass
class Fault:
    """A failure that stops the worker until `retry_at` (monotonic); `message` is for users."""

    kind: str  # "disk", "store", "manifest", "model", "internal"
    message: str
    retry_at: float
    need: int = 0  # disk faults: free bytes needed before a retry is worth it
    where: str = ""  # disk faults: the directory whose filesystem is full

    def describe(self) -> str:
        return f"{self.message}; retrying at {wall_clock(self.retry_at)}"


class CircuitBreaker:
    """Closed while calls succeed. After `threshold` consecutive failures it opens: no calls
    until `next_try`, then one probe; a failed probe doubles the wait (up to `max_wait`), one
    success closes it. The indexer keeps lexical work going while it is open."""

    def __init__(
        self,
        threshold: int = 4,
        first_wait: float = 5.0,
        max_wait: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self._backoff = Backoff(first_wait, max_wait)
        self._clock = clock
        self.consecutive = 0
        self.opened_at: float | None = None  # monotonic
        self.down_since: str | None = None  # wall clock, for the status
        self.next_try = 0.0
        self.last_error = ""

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None

    def allow(self) -> bool:
        """May a call go out now? (After a failure: once `next_try` has passed; while open,
        that call is the probe.)"""
        return self._clock() >= self.next_try

    def probe_now(self) -> None:
        """The user asked to retry (rag/reindex): the next call goes out now."""
        self.next_try = 0.0

    def wait_s(self) -> float:
        return max(0.0, self.next_try - self._clock()) if self.is_open else 0.0

    def record_success(self) -> bool:
        """Returns True when this success closed an open breaker."""
        was_open = self.is_open
        self.consecutive = 0
        self.opened_at = None
        self.down_since = None
        self.next_try = 0.0
        self._backoff.reset()
        return was_open

    def record_failure(self, error: str) -> bool:
        """Returns True when the breaker is open after this failure."""
        self.consecutive += 1
        self.last_error = error
        if self.is_open or self.consecutive >= self.threshold:
            if self.opened_at is None:
                self.opened_at = self._clock()
                self.down_since = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            self.next_try = self._clock() + self._backoff.next_delay()
        else:  # below the threshold: a short pause before the next batch
            self.next_try = self._clock() + min(4.0, 0.5 * 2**self.consecutive)
        return self.is_open

    def describe(self, what: str = "embedding provider") -> str:
        return (
            f"dense paused: {what} down since {self.down_since}, next try at {wall_clock(self.next_try)} "
            f"({self.last_error}); lexical search keeps working"
        )
