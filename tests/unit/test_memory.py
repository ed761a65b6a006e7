"""ragls.system.memory gives memory the process freed back to the system (glibc)."""

from __future__ import annotations

import subprocess
import sys

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
