"""Polling for a condition in tests that drive a real indexer thread."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(cond: Callable[[], bool], timeout: float = 120) -> None:
    """Return once `cond()` is true; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")
