"""`ragls migrate`: copy a workspace's embedded index (edge shard + manifest) to a Qdrant
server collection, vectors and payloads as they are: nothing is re-chunked or re-embedded.

After a migration, setting `qdrant.url` makes the server start on the copied collection: the
manifest says every file is indexed, and reconciliation finds every point in place."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import qdrant_edge as qe
from pydantic.alias_generators import to_camel
from qdrant_client import QdrantClient

from ragls.config import Settings, SettingsError, load_settings
from ragls.embedding import model_identity
from ragls.store import StoreError, index_dir, manifest_path
from ragls.store.base import DENSE, LEXICAL, PointData
from ragls.store.edge import EdgeStore
from ragls.store.remote import RemoteStore

MANIFEST = "manifest.sqlite"
_PAGE = 512

Progress = Callable[[int, int], None]  # (copied, total)


@dataclass
class MigrateReport:
    points: int
    dense: int
    seconds: float
    source: str
    collection: str
    location: str
    manifest: str
    manifest_copied: bool


def remote_manifest_path(root: Path, settings: Settings, model_id: str, dimension: int) -> Path:
    """Where the indexer keeps the manifest of a server index (see `ragls.store.manifest_path`)."""
    return manifest_path(root, settings, model_id, dimension)


def with_url(settings: Settings, url: str | None) -> Settings:
    """The same settings with another `qdrant.url` (None = the embedded store)."""
    return settings.model_copy(update={"qdrant": settings.qdrant.model_copy(update={"url": url})})


def iter_edge_points(store: EdgeStore, page: int = _PAGE) -> Iterator[list[PointData]]:
    """Every point of an edge shard with its vectors and payload, a page at a time."""
    shard = store._shard  # EdgeStore has no public scroll-with-vectors; this module is its only other reader
    offset = None
    while True:
        recs, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=page, with_payload=True, with_vector=True))
        batch: list[PointData] = []
        for r in recs:
            vec = r.vector if isinstance(r.vector, dict) else {}
            sp = vec.get(LEXICAL)
            sparse = (list(sp.indices), [float(v) for v in sp.values]) if sp is not None else ([], [])
            dense = vec.get(DENSE)
            batch.append(
                PointData(
                    str(uuid.UUID(str(r.id))),
                    sparse,
                    dict(r.payload or {}),
                    np.asarray(dense, dtype=np.float32) if dense is not None else None,
                )
            )
        if batch:
            yield batch
        if offset is None:
            return


def copy_points(src: EdgeStore, dst: RemoteStore, progress: Progress | None = None) -> tuple[int, int]:
    """Upsert every source point into the destination; returns (points, points with dense)."""
    total = src.count()
    points = dense = 0
    for batch in iter_edge_points(src):
        dst.upsert(batch)
        points += len(batch)
        dense += sum(1 for p in batch if p.dense is not None)
        if progress is not None:
            progress(points, total)
    return points, dense


def verify_copy(src: EdgeStore, dst: RemoteStore) -> None:
    """Every source point must be in the destination with the same dense state."""
    want = src.all_ids()
    have = dst.all_ids()
    missing = [i for i in want if i not in have]
    wrong = [i for i, (_, d) in want.items() if i in have and have[i][1] != d]
    if missing or wrong:
        raise StoreError(f"copy incomplete: {len(missing)} points missing, {len(wrong)} without their dense vector")


def copy_manifest(src: Path, dst: Path) -> bool:
    """Consistent copy via SQLite's backup API (the manifest runs in WAL mode, so copying
    the file alone could miss committed pages). False when both paths are the same file."""
    if dst.exists() and src.resolve() == dst.resolve():
        return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    s = sqlite3.connect(str(src))
    d = sqlite3.connect(str(dst))
    try:
        s.backup(d)
    finally:
        d.close()
        s.close()
    return True


def migrate(
    root: Path,
    src_settings: Settings,
    dst_settings: Settings,
    model_id: str,
    dimension: int,
    *,
    client: QdrantClient | None = None,
    replace: bool = False,
    progress: Progress | None = None,
) -> MigrateReport:
    """Copy the embedded index of `root` (as `src_settings` locate it) to the server collection
    `dst_settings` name. `client` lets tests share one in-process Qdrant between stores."""
    t0 = time.monotonic()
    src_dir = index_dir(root, src_settings, model_id, dimension)
    shard_dir, src_manifest = src_dir / "shard", src_dir / MANIFEST
    dst_manifest = remote_manifest_path(root, dst_settings, model_id, dimension)
    if not src_manifest.is_file() or not shard_dir.is_dir():
        raise StoreError(f"no embedded index at {src_dir}{_available(src_dir)}")
    same_manifest = dst_manifest.exists() and src_manifest.resolve() == dst_manifest.resolve()
    if dst_manifest.exists() and not same_manifest and not replace:
        raise StoreError(f"{dst_manifest} already exists; pass --replace to overwrite it")
    src = EdgeStore(shard_dir, dimension)
    try:
        dst = _open_destination(root, dst_settings, model_id, dimension, client, replace)
        try:
            points, dense = copy_points(src, dst, progress)
            verify_copy(src, dst)
            copied = copy_manifest(src_manifest, dst_manifest)
            return MigrateReport(
                points,
                dense,
                round(time.monotonic() - t0, 2),
                str(src_dir),
                dst.collection,
                dst.location,
                str(dst_manifest),
                copied,
            )
        finally:
            dst.close()
    finally:
        src.close()


def _open_destination(
    root: Path, settings: Settings, model_id: str, dimension: int, client: QdrantClient | None, replace: bool
) -> RemoteStore:
    dst = RemoteStore(root, settings, model_id, dimension, client=client)
    try:
        if not replace:
            if dst.count():
                raise StoreError(f"collection {dst.collection} is not empty; pass --replace to drop it first")
            return dst
        dst.drop()
    except BaseException:
        dst.close()
        raise
    dst.close()
    return RemoteStore(root, settings, model_id, dimension, client=client)  # recreated, empty


def _available(src_dir: Path) -> str:
    """Name the indexes that do exist for this workspace: the model is usually the mismatch."""
    others = (
        sorted(p.name for p in src_dir.parent.glob("*") if (p / "shard").is_dir()) if src_dir.parent.is_dir() else []
    )
    return f" (found indexes: {', '.join(others)}; pick one with --index NAME)" if others else ""


def _split_index_name(name: str) -> tuple[str, int]:
    """`all-MiniLM-L6-v2-int8-384` -> (model slug, 384): the directory names index_dir makes."""
    model, _, dim = name.rpartition("-")
    if not model or not dim.isdigit():
        raise SystemExit(f"ragls: --index {name!r} is not of the form MODEL-DIMENSION")
    return model, int(dim)


def cmd_migrate(a: argparse.Namespace) -> int:
    root = Path(a.path).expanduser().resolve()
    if not root.is_dir():
        raise SystemExit(f"ragls: {a.path} is not a directory")
    try:
        settings = load_settings(root)
    except SettingsError as exc:
        raise SystemExit(f"ragls: {exc}") from exc
    url = a.to_url or settings.qdrant.url
    if not url:
        raise SystemExit("ragls: no destination: pass --to-url or set qdrant.url")
    src_settings = with_url(settings, None)
    if a.from_path:
        src_settings = src_settings.model_copy(
            update={"qdrant": src_settings.qdrant.model_copy(update={"path": a.from_path})}
        )
    # index_dir slugs the model id the same way, so a slug from --index names the same directory.
    model_id, dim = _split_index_name(a.index) if a.index else model_identity(settings.embedder)

    def progress(done: int, total: int) -> None:
        if not a.quiet:
            print(f"\rcopied {done}/{total} points", end="", file=sys.stderr, flush=True)

    try:
        rep = migrate(root, src_settings, with_url(settings, url), model_id, dim, replace=a.replace, progress=progress)
    except StoreError as exc:
        raise SystemExit(f"ragls: {exc}") from exc
    if not a.quiet:
        print(file=sys.stderr)
    print(json.dumps({to_camel(k): v for k, v in asdict(rep).items()}, indent=2))
    return 0


def add_migrate_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("migrate", help="copy a folder's embedded index to a Qdrant server, without re-embedding")
    p.add_argument("path", help="workspace folder")
    p.add_argument("--to-url", default=None, help="Qdrant server URL (default: qdrant.url from the settings)")
    p.add_argument(
        "--from-path", default=None, help="embedded index base directory (default: qdrant.path or the cache)"
    )
    p.add_argument(
        "--index", default=None, help="MODEL-DIMENSION directory to copy (default: the configured embedder's)"
    )
    p.add_argument("--replace", action="store_true", help="drop the destination collection and manifest first")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_migrate)
