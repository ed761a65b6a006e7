"""Storage: Qdrant Edge embedded by default; a Qdrant server when `qdrant.url` is set."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.store.base import (
    PointData,
    SearchRequest,
    Store,
    StoreCorrupt,
    StoredHit,
    StoreError,
    StoreFull,
    StoreLocked,
)
from ragls.system.identity import workspace_id

if TYPE_CHECKING:  # the settings load where used: a child making a new shard imports this package
    from ragls.config import Settings

__all__ = [
    "PointData",
    "SearchRequest",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreFull",
    "StoreLocked",
    "StoredHit",
    "index_dir",
    "manifest_path",
    "never_indexed",
    "open_index",
    "open_store",
    "previous_manifest_bytes",
    "workspace_id",
]


def _workspace_indexes(root: Path, settings: Settings) -> Path:
    from ragls.config import cache_root

    base = Path(settings.qdrant.path).expanduser() if settings.qdrant.path else cache_root(settings) / "index"
    return base / workspace_id(root)


def index_dir(root: Path, settings: Settings, model_id: str, dimension: int) -> Path:
    """Model and dimension are part of the identity, so vectors of two models never mix."""
    model_slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", model_id)
    return _workspace_indexes(root, settings) / f"{model_slug}-{dimension}"


def never_indexed(root: Path, settings: Settings) -> bool:
    """True when no index of `root` was ever made here (with any model): until its first
    files are stored, nothing in the folder can be found. A Qdrant server may hold the
    points of another machine's run, so a remote store is never called new."""
    return not settings.qdrant.url and not _workspace_indexes(root, settings).is_dir()


def previous_manifest_bytes(root: Path, settings: Settings) -> int:
    """The size of the largest manifest this folder has here (any model, slot or backend; 0
    when none): how large its last index was, known before anything is opened."""
    base = _workspace_indexes(root, settings)
    sizes = [0]
    for pattern in ("*/manifest.sqlite", "*/*/manifest.sqlite"):
        for p in base.glob(pattern):
            try:
                sizes.append(p.stat().st_size)
            except OSError:  # removed meanwhile
                pass
    return max(sizes)


def manifest_path(root: Path, settings: Settings, model_id: str, dimension: int) -> Path:
    """The primary manifest: beside the embedded shard, or one per server URL for a remote
    store (so switching backends never mixes their bookkeeping)."""
    base = index_dir(root, settings, model_id, dimension)
    if settings.qdrant.url:
        return base / f"remote-{hashlib.sha1(settings.qdrant.url.encode()).hexdigest()[:10]}" / "manifest.sqlite"
    return base / "manifest.sqlite"


def open_store(root: Path, settings: Settings, model_id: str, dimension: int) -> Store:
    return open_index(root, settings, model_id, dimension)[0]


_MAX_SLOTS = 8


def open_index(
    root: Path,
    settings: Settings,
    model_id: str,
    dimension: int,
    primary_wait: float = 0.0,
    fallback: bool = True,
) -> tuple[Store, Path, str | None]:
    """The store, the path of its manifest, and a notice when a fallback store was used.

    Qdrant Edge allows one process per shard. A second editor window on the same folder
    gets a separate slot (alt-N) instead of an error; the shared embedding cache means it
    re-embeds nothing the first one already did. The folder's owner (sharing/owner.py) waits up to
    `primary_wait` seconds for the primary slot: a killed predecessor's lock is released by
    the OS a moment after its owner lock."""
    base = index_dir(root, settings, model_id, dimension)
    if settings.qdrant.url:
        from ragls.store.remote import RemoteStore

        return (
            RemoteStore(root, settings, model_id, dimension),
            manifest_path(root, settings, model_id, dimension),
            None,
        )
    from ragls.store.edge import EdgeStore

    deadline = time.monotonic() + primary_wait
    for slot in range(_MAX_SLOTS):
        d = base if slot == 0 else base / f"alt-{slot}"
        while True:
            try:
                store = EdgeStore(d / "shard", dimension)
                break
            except StoreLocked:
                if not fallback:
                    raise StoreLocked(
                        f"the index at {base} is in use by a running ragls process (an editor?); "
                        "run this again when it has exited"
                    ) from None
                if slot or time.monotonic() >= deadline:
                    store = None
                    break
                time.sleep(0.05)
        if store is None:
            continue
        notice = (
            None
            if slot == 0
            else (f"the index at {base} is in use by another ragls process; using a separate index at {d}")
        )
        return store, d / "manifest.sqlite", notice
    raise StoreLocked(f"all {_MAX_SLOTS} index slots under {base} are in use by other ragls processes")
