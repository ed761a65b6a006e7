"""ragls.system.memory gives memory the process freed back to the system (glibc), and the
store's written pages back to the page cache."""

from __future__ import annotations

import mmap
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np

from ragls.store import PointData, SearchRequest
from ragls.store.edge import EdgeStore
from ragls.system import memory

_PROBE = """
import sys
from ragls.system import memory

def rss_mb():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) // 1024 for line in fh if line.startswith("VmRSS:"))

memory.limit_arenas()
blocks = [bytearray(100_000) for _ in range(2_000)]  # ~200 MB of heap blocks (under mmap's threshold)
last = blocks.pop()  # keeps the heap's top in use: free() alone cannot give the rest back
del blocks
before = rss_mb()
memory.trim()  # the first call is never rate-limited
after_first = rss_mb()
more = [bytearray(100_000) for _ in range(2_000)]
keep = more.pop()
del more
memory.trim()  # within the rate limit: nothing happens
skipped = rss_mb()
memory.trim(force=True)
forced = rss_mb()
print(before, after_first, skipped, forced)
"""


def test_trim_returns_freed_heap_pages_and_is_rate_limited() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True)
    before, after_first, skipped, forced = (int(x) for x in out.stdout.split())
    assert before - after_first > 150, out.stdout  # ~200 MB freed by Python, kept by malloc until the trim
    assert skipped - after_first > 150, out.stdout  # a second trim within 2 s is skipped
    assert skipped - forced > 150, out.stdout


def _resident_under(directory: Path) -> int:
    """Bytes of this process's mappings of files under `directory` that are resident."""
    prefix = str(directory.resolve()) + "/"
    total, inside = 0, False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
                inside = len(fields) >= 6 and fields[5].startswith(prefix)
            elif inside and fields[0] == "Rss:":
                total += int(fields[1]) * 1024
    return total


def test_unmap_file_pages_drops_shared_pages_and_keeps_every_byte(tmp_path: Path) -> None:
    size = 4 << 20
    shared_file, private_file = tmp_path / "shared.bin", tmp_path / "private.bin"
    for f in (shared_file, private_file):
        f.write_bytes(b"\0" * size)
    with open(shared_file, "r+b") as a, open(private_file, "r+b") as b:
        shared = mmap.mmap(a.fileno(), size)  # MAP_SHARED
        private = mmap.mmap(b.fileno(), size, flags=mmap.MAP_PRIVATE)
        shared[:] = b"s" * size  # dirty, never flushed
        private[:] = b"p" * size  # a private copy: DONTNEED would throw it away
        assert _resident_under(tmp_path) >= 2 * size
        released = memory.unmap_file_pages(str(tmp_path))
        assert released == size  # the shared mapping only
        assert _resident_under(tmp_path) <= size + (64 << 10)  # the private one stays resident
        assert private[:16] == b"p" * 16 and private[-16:] == b"p" * 16
        assert shared[:16] == b"s" * 16 and shared[-16:] == b"s" * 16  # read back from the page cache
        shared.close()
        private.close()
    assert shared_file.read_bytes() == b"s" * size  # the dirty pages reached the file
    assert private_file.read_bytes() == b"\0" * size


def test_edge_store_releases_its_written_pages_and_loses_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "index" / "shard"
    store = EdgeStore(directory, 64)
    rng = np.random.default_rng(7)
    points = [
        PointData(
            str(uuid.uuid5(uuid.NAMESPACE_URL, f"p{i}")),
            ([i % 500, 1000 + i], [1.0, 2.0]),
            {"path": f"f{i % 50}.py", "language": "python", "symbol_names": [], "text": f"chunk {i} " + "x" * 900},
            rng.standard_normal(64).astype(np.float32),
        )
        for i in range(3000)
    ]
    store.upsert(points)
    assert _resident_under(directory) > 2 << 20
    store.release_pages(force=True)
    assert _resident_under(directory) < 256 << 10
    store.release_pages()  # within the rate limit: nothing to do, nothing fails
    hits = store.search(SearchRequest(dense=points[42].dense, sparse=([1042], [1.0]), limit=3))
    assert hits and hits[0].id == points[42].id
    store.close()
    again = EdgeStore(directory, 64)
    try:
        assert again.count() == 3000
        got = {h.id: h.payload["text"] for h in again.retrieve([p.id for p in points])}
        assert got == {p.id: p.payload["text"] for p in points}
    finally:
        again.close()


_PRELOAD_PROBE = """
import gc
walked = []
def seen(phase, info):
    if phase == "start" and info["generation"] == 2:
        walked.append(len(gc.get_objects(2)))
gc.callbacks.append(seen)
from ragls.frontends.lsp import server
at_start = len(gc.get_objects())
walked.clear()
server.preload()
print(at_start, gc.get_freeze_count(), max(walked, default=0))
"""


def test_the_preload_keeps_what_start_up_leaves_alive_out_of_full_collections() -> None:
    """A full collection among the index modules' imports walked every object of the server's
    start-up (~50,000, 20-70 ms with the GIL held): the first requests waited for it."""
    out = subprocess.run(
        [sys.executable, "-c", _PRELOAD_PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    at_start, frozen, most_walked = (int(x) for x in out.stdout.split())
    assert at_start > 30_000, out.stdout  # pygls, lsprotocol and the LSP front end
    assert frozen >= at_start, out.stdout  # start-up's objects and the imports' are frozen
    assert most_walked < at_start // 2, out.stdout  # no full collection walks start-up's objects
