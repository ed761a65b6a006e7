"""Requests first (system/foreground.py): background store writes wait while a request is answered."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

from ragls.store.base import PointData
from ragls.store.edge import EdgeStore
from ragls.system.foreground import FOREGROUND, Foreground


def test_background_steps_wait_for_the_request_in_flight_and_no_longer() -> None:
    fg = Foreground()
    t0 = time.monotonic()
    fg.yield_to_requests(max_wait=1.0)
    assert time.monotonic() - t0 < 0.5  # nothing in flight: no wait (max_wait would be 1 s)
    done = threading.Event()

    def request() -> None:
        with fg.request():
            time.sleep(0.2)
        done.set()

    threading.Thread(target=request).start()
    time.sleep(0.02)
    assert fg.busy
    t0 = time.monotonic()
    fg.yield_to_requests(max_wait=5.0)
    waited = time.monotonic() - t0
    assert done.is_set() and 0.1 < waited < 4.0, waited  # until the request ended, not max_wait
    assert not fg.busy and fg.yields == 1


def test_a_stream_of_requests_cannot_stop_background_work() -> None:
    fg = Foreground()
    stop = threading.Event()

    def requests() -> None:
        while not stop.is_set():
            with fg.request():
                time.sleep(0.01)

    threads = [threading.Thread(target=requests) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.02)
        t0 = time.monotonic()
        for _ in range(5):
            fg.yield_to_requests(max_wait=0.05)
        assert time.monotonic() - t0 < 1.0  # bounded by max_wait, not by the requests
    finally:
        stop.set()
        for t in threads:
            t.join()


def test_store_writes_yield_to_a_request_between_slices(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "idx", 4)
    points = [
        PointData(str(uuid.uuid4()), ([1, 2, 3], [1.0, 1.0, 1.0]), {"path": f"f{i}.py", "text": "x"})
        for i in range(100)
    ]
    before = FOREGROUND.yields
    with FOREGROUND.request():
        writer = threading.Thread(target=store.upsert, args=(points,))
        writer.start()
        time.sleep(0.3)  # the writer waits at its slice boundaries (50 ms each) while this request runs
    writer.join()
    assert store.count() == 100
    assert FOREGROUND.yields > before
    store.close()
