"""`rag/indexStatus` in the server's first few hundred milliseconds, as plain JSON.

A client asks for the status right after `initialized`, while the status models (pydantic and
the settings schema, ~130 ms of imports on a 2-core machine) are still loading in the background.
Waiting for them made that first answer the slowest status of a session (issue 19: ≤ 50 ms).
Until they are loaded the answer is the `starting` status built here, without pydantic; the
settings are not read yet, so `embedder` and `store` are empty (docs/protocol.md).
tests/unit/test_early_status.py keeps this equal to what `ragls.status` builds for the same folders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragls import PROTOCOL_VERSION, __version__
from ragls.status_display import display


def _zero() -> dict[str, int]:
    return {"done": 0, "total": 0}


def folder_entry(name: str, uri: str, path: Path, nested_in: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "uri": uri,
        "path": str(path),
        "state": "indexing",
        "phase": "starting",
        "filesTotal": 0,
        "filesIndexed": 0,
        "filesFailed": 0,
        "chunks": 0,
        "lexical": _zero(),
        "dense": _zero(),
        "errors": [],
        "message": None if nested_in is None else f"inside {nested_in}, indexed with it",
        "nestedIn": nested_in,
    }


def starting_status(folders: list[tuple[str, str, Path, str | None]]) -> dict[str, Any]:
    """The workspace's status before any folder's index or settings exist: `folders` is
    (name, uri, path, nested_in) per workspace folder, in workspace order (at least one)."""
    st: dict[str, Any] = {
        "state": "indexing",
        "phase": "starting",
        "filesTotal": 0,
        "filesIndexed": 0,
        "filesFailed": 0,
        "filesSkipped": 0,
        "skippedByReason": {},
        "chunks": 0,
        "lexical": _zero(),
        "dense": _zero(),
        "lastIndexedAt": None,
        "embedder": {"provider": "", "model": "", "dimension": 0, "device": None},
        "store": {"kind": "", "location": ""},
        "cache": {"hits": 0, "misses": 0, "hitRate": 0.0},
        "embedded": 0,
        "snapshot": None,
        "errors": [],
        "workspace": str(folders[0][2]),
        "version": __version__,
        "protocolVersion": PROTOCOL_VERSION,
        "message": None,
        "warnings": [],
        "watching": False,
        "folders": [folder_entry(*f) for f in folders],
    }
    st["display"] = display(st)
    return st
