"""Background threads of the indexer: at its niceness, results handed back as futures."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")


def lower_priority(nice: int) -> None:
    """On Linux a niceness applies to the calling thread (and the ONNX threads it starts)."""
    if nice and hasattr(os, "setpriority"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
        except OSError:
            pass


def in_thread(nice: int, fn: Callable[..., _T], *args: Any) -> Future[_T]:
    """Run `fn` in a daemon thread at `nice`; its result or exception comes out of the future."""
    fut: Future[_T] = Future()

    def run() -> None:
        try:
            lower_priority(nice)
            fut.set_result(fn(*args))
        except BaseException as exc:  # handed to whoever waits for the result
            fut.set_exception(exc)

    threading.Thread(target=run, name=f"ragls-{getattr(fn, '__name__', 'job')}", daemon=True).start()
    return fut
