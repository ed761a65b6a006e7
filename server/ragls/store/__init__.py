"""Storage: Qdrant Edge embedded by default; a Qdrant server when `qdrant.url` is set."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ragls.config import Settings, cache_root
from ragls.store.base import PointData, SearchRequest, Store, StoredHit, StoreError, StoreLocked

__all__ = [
    "PointData",
    "SearchRequest",
    "Store",
    "StoreError",
    "StoreLocked",
    "StoredHit",
    "index_dir",
    "open_store",
    "workspace_id",
]


def workspace_id(root: Path) -> str:
    """Readable and unique: the folder name plus a hash of its absolute path."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name)[:40] or "root"
    return f"{slug}-{hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:12]}"


def index_dir(root: Path, settings: Settings, model_id: str, dimension: int) -> Path:
    """Model and dimension are part of the identity, so vectors of two models never mix."""
    base = Path(settings.qdrant.path).expanduser() if settings.qdrant.path else cache_root(settings) / "index"
    model_slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", model_id)
    return base / workspace_id(root) / f"{model_slug}-{dimension}"


def open_store(root: Path, settings: Settings, model_id: str, dimension: int) -> Store:
    if settings.qdrant.url:
        from ragls.store.remote import RemoteStore

        return RemoteStore(root, settings, model_id, dimension)
    from ragls.store.edge import EdgeStore

    return EdgeStore(index_dir(root, settings, model_id, dimension) / "shard", dimension)
