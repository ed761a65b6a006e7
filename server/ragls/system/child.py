"""Child processes of ragls's own modules (the watch, the history reader, the shard creator)."""

from __future__ import annotations

import sys


def module_command(module: str, *args: str) -> list[str]:
    """`python -P -m module args...` with this interpreter. -P: `-m` would put the current
    directory first on the child's path, and a server's is often the workspace, whose files must
    never be imported (a `json.py` there was)."""
    return [sys.executable, "-P", "-m", module, *args]


def failure(stderr: str | bytes, returncode: int, who: str) -> str:
    """Why a child failed: the last line it wrote to stderr (a traceback's message), else its status."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    lines = text.strip().splitlines()
    return lines[-1] if lines else f"{who} exited with status {returncode}"
