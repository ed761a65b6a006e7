"""Where a snapshot comes from (`embedder.snapshot`: a file or an http(s) URL, from the user's own
settings only) and its one-time import into the embedding cache.

A URL is downloaded into `<cache>/snapshots/` (bounded in size, with a conditional request, so an
unchanged artifact is not downloaded again); a file is read where it is. The cache remembers
which snapshot content (sha256) it has taken in, so a restart verifies the file (a fraction of a
second) but inserts nothing again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls.embedding import snapshot as snap

if TYPE_CHECKING:
    from ragls.embedding.cache import EmbeddingCache

log = logging.getLogger(__name__)

_LOCK = threading.Lock()  # two folders of one process importing the same file at once


@dataclass
class ImportReport:
    """What the status shows: `state` is importing, imported or failed."""

    source: str
    state: str = "importing"
    vectors: int = 0
    message: str | None = None
    hashes: frozenset[str] = field(default_factory=frozenset)
    info: dict[str, Any] = field(default_factory=dict)  # the snapshot's header (snapshot.summary)


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _download(url: str, folder: Path, max_bytes: int, timeout: float) -> Path:
    """The snapshot at `url` as a local file, downloaded again only when the server says it
    changed (ETag / Last-Modified)."""
    import httpx

    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(url.encode()).hexdigest()[:24]
    dest, meta_path = folder / f"{name}.snapshot", folder / f"{name}.json"
    headers: dict[str, str] = {}
    try:
        meta = json.loads(meta_path.read_text())
        if dest.is_file() and isinstance(meta, dict):
            if meta.get("etag"):
                headers["If-None-Match"] = str(meta["etag"])
            if meta.get("last_modified"):
                headers["If-Modified-Since"] = str(meta["last_modified"])
    except (OSError, ValueError):
        pass
    tmp = folder / f".{name}.part"
    with httpx.stream("GET", url, headers=headers, timeout=timeout, follow_redirects=True) as r:
        if r.status_code == 304 and dest.is_file():
            return dest
        if r.status_code != 200:
            raise snap.SnapshotError(f"snapshot download from {url} failed: HTTP {r.status_code}")
        declared = r.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise snap.SnapshotError(f"snapshot at {url} is {int(declared):,} bytes, over the limit of {max_bytes:,}")
        got = 0
        with open(tmp, "wb") as fh:
            for block in r.iter_bytes(1 << 20):
                got += len(block)
                if got > max_bytes:
                    fh.close()
                    tmp.unlink(missing_ok=True)
                    raise snap.SnapshotError(f"snapshot at {url} is over the limit of {max_bytes:,} bytes")
                fh.write(block)
        os.replace(tmp, dest)
        meta_path.write_text(
            json.dumps({"etag": r.headers.get("etag"), "last_modified": r.headers.get("last-modified")})
        )
    return dest


def _content_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def import_snapshot(
    source: str,
    cache: EmbeddingCache,
    identity: snap.Identity,
    cache_root: Path,
    name_key: str,
    report: ImportReport,
    max_bytes: int = snap.DEFAULT_MAX_BYTES,
    timeout: float = 120.0,
) -> ImportReport:
    """Verify the snapshot and put its vectors into `cache` unless this cache took in the same
    content before. Never raises: a snapshot that cannot be used is a status message, and
    indexing embeds as it would without one."""
    t0 = time.monotonic()
    folder = cache_root / "snapshots"
    try:
        path = _download(source, folder, max_bytes, timeout) if is_url(source) else Path(source).expanduser()
        loaded = snap.read(path, identity, max_bytes)
        digest = _content_sha(path)
        done_path = folder / "imported.json"
        key = f"{identity.model}|{identity.dimension}|{identity.embed_format}|{digest}"
        with _LOCK:
            try:
                done = json.loads(done_path.read_text())
            except (OSError, ValueError):
                done = {}
            if not isinstance(done, dict):
                done = {}
            if key not in done:
                snap.into_cache(loaded, cache, name_key)
                folder.mkdir(parents=True, exist_ok=True)
                done[key] = {"source": source, "vectors": len(loaded), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
                tmp = done_path.with_suffix(".tmp")
                tmp.write_text(json.dumps(done, indent=1))
                os.replace(tmp, done_path)
        report.vectors = len(loaded)
        report.hashes = frozenset(loaded.hashes)
        report.info = snap.summary(loaded)
        report.state = "imported"
        log.info("snapshot %s: %d vectors ready in %.1fs", source, len(loaded), time.monotonic() - t0)
    except snap.SnapshotError as exc:
        report.state, report.message = "failed", str(exc)
        log.warning("snapshot %s not used: %s", source, exc)
    except Exception as exc:  # a network or disk failure: indexing goes on without it
        report.state, report.message = "failed", f"cannot read snapshot {source}: {exc}"
        log.warning("%s", report.message)
    return report
