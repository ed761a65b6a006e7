"""Memory the process no longer needs goes back to the system: native memory freed but kept
by glibc's malloc (`trim`), and pages of files it wrote through memory maps (`unmap_file_pages`).

Measured at 150,000 chunks: after 30 s of the dense pass the process held 157 MB that
`malloc_trim` could release (buffers of ONNX Runtime, Qdrant Edge and numpy, freed but kept by
the allocator), and glibc's one-arena-per-thread default kept another ~65 MB of free space
spread over the arenas of the many threads (ONNX Runtime's, Qdrant's, the request pool's).
Elsewhere than glibc and Linux these calls do nothing."""

from __future__ import annotations

import gc
import logging
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # ctypes loads on first use: freeze_heap runs before anything else is imported
    import ctypes

log = logging.getLogger(__name__)

_M_ARENA_MAX = -8  # mallopt parameter numbers, <malloc.h>
_MADV_DONTNEED = 4  # <sys/mman.h>, Linux
_TRIM_EVERY_S = 2.0  # at most one trim per this many seconds (a trim walks every arena)

_libc: ctypes.CDLL | None = None  # glibc, on first use
_last_trim = 0.0


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        import ctypes
        import ctypes.util

        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            if hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt"):  # musl has neither
                lib.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                _libc = lib
        except OSError:
            pass
    return _libc


def freeze_heap() -> None:
    """Leave the objects alive now (modules, records, chunk ids) out of future garbage
    collections. A full collection walks every tracked object with the GIL held: during a
    files10k pass each took 44-81 ms, every 8-10 s, and stalled every request (they freed
    nothing); at start-up, one among the imports of the index modules took 20 ms on an idle
    machine (40-70 ms on a busy one), the server's slowest status answers. Frozen objects are
    still freed when their last reference goes."""
    gc.freeze()


def limit_arenas(n: int = 2) -> None:
    """Cap malloc's arenas (call before starting threads: arenas are made on first use)."""
    lib = _glibc()
    if lib is not None and not lib.mallopt(_M_ARENA_MAX, n):
        log.debug("mallopt(M_ARENA_MAX) refused")


def trim(force: bool = False) -> None:
    """Return free heap pages to the system; rate-limited unless `force`. ctypes releases
    the GIL for the call, so requests go on meanwhile."""
    global _last_trim
    lib = _glibc()
    now = time.monotonic()
    if lib is None or (not force and now - _last_trim < _TRIM_EVERY_S):
        return
    _last_trim = now
    lib.malloc_trim(0)


def unmap_file_pages(directory: str) -> int:
    """Drop from this process the resident pages of its shared mappings of files under
    `directory`; the bytes of such mappings (0: none, or not Linux with glibc).

    Qdrant Edge writes its shard through shared memory maps and keeps every page it wrote
    mapped: at 150,000 chunks 300 MB of the server's RSS (vector chunks, payload pages, the
    WAL), all of it file cache. MADV_DONTNEED on a shared file mapping loses nothing: a dirty
    page stays in the page cache, written back by the kernel, and a later read maps it again
    from there (a minor fault). Only shared mappings are touched: on a private one it would
    discard writes. The caller must keep the owner of these mappings from unmapping them
    meanwhile (an address freed and reused by a private mapping would be zeroed): EdgeStore
    holds its write lock, which every call that could remap the shard takes."""
    lib = _glibc()
    if lib is None:
        return 0
    prefix = os.path.realpath(directory).rstrip("/") + "/"
    total = 0
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.readlines()
    except OSError:
        return 0
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[1][3:4] != "s" or not fields[5].startswith(prefix):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if lib.madvise(start, end - start, _MADV_DONTNEED) == 0:
            total += end - start
    return total
