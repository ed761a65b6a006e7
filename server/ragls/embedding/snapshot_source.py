"""Where a snapshot comes from (`embedder.snapshot`: a file or an http(s) URL, from the user's own
settings only; or `ragls snapshot import`) and its one-time import into the embedding cache.

A URL is downloaded into `<cache>/snapshots/` (bounded in size, with a conditional request, so an
unchanged artifact is not downloaded again); a file is read where it is. The import verifies the
file in one streaming pass, then reads it again a batch at a time into the cache's snapshot rows
(embedding/cache.py), which count only once the whole file went in. Each batch is compared with
the vectors this machine's model computed for the same chunks, where the cache has them: one
that disagrees, and the snapshot is distrusted whole (issue 51: a well-formed snapshot whose
vectors lie). The cache remembers each snapshot's content (identity and checksum), so a restart
verifies the file (a fraction of a second) but inserts nothing again, and a distrusted one is
refused at once.
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
from ragls.embedding.cache import AGREE

if TYPE_CHECKING:
    import numpy as np

    from ragls.embedding.cache import EmbeddingCache

log = logging.getLogger(__name__)

_LOCK = threading.Lock()  # two folders of one process importing the same file at once


class SnapshotDistrusted(snap.SnapshotError):
    """A well-formed snapshot whose vectors disagree with the model's."""


def distrusted_message(reason: str) -> str:
    return f"snapshot distrusted: {reason}; none of its vectors is used, the model embeds those chunks"


@dataclass
class ImportReport:
    """What the status shows: `state` is importing, imported or failed."""

    source: str
    state: str = "importing"
    vectors: int = 0
    message: str | None = None
    snapshot: int | None = None  # its id in the embedding cache: which vectors came from it
    distrusted: bool = False  # failed because its vectors lie (a status warning), not unreadable
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


def _disagreement(own: dict[str, np.ndarray], keys: list[str], vectors: np.ndarray) -> float:
    """The lowest cosine between the snapshot's vectors and this machine's for the same chunks
    (1.0 when the cache computed none of them)."""
    import numpy as np

    at = [i for i, k in enumerate(keys) if k in own]
    if not at:
        return 1.0
    mine = np.stack([own[keys[i]] for i in at])
    theirs = vectors[at]
    cos = (mine * theirs).sum(axis=1) / (np.linalg.norm(mine, axis=1) * np.linalg.norm(theirs, axis=1) + 1e-12)
    return float(cos.min())


def _insert(f: snap.SnapshotFile, cache: EmbeddingCache, sid: int, name_key: str) -> None:
    """The file's vectors into the cache's rows of snapshot `sid`, a batch at a time, each batch
    first compared with the vectors this machine computed; then the snapshot counts."""
    checked = 0
    for section, prefix in ((f.vectors, ""), (f.names, name_key)):
        for hashes, vectors in f.batches(section):
            keys = [prefix + h for h in hashes]
            own = cache.get_own(keys, count=False)
            checked += len(own)
            if (agree := _disagreement(own, keys, vectors)) < AGREE:
                reason = (
                    f"its {section.what} of a chunk this machine's model embedded differs from the model's "
                    f"(cosine {agree:.2f} < {AGREE})"
                )
                cache.distrust(sid, reason)
                raise SnapshotDistrusted(distrusted_message(reason))
            cache.put_snapshot(sid, keys, vectors)
    f.check_unchanged()  # the bytes inserted are the bytes verified
    if not cache.trust_snapshot(sid):  # another index's model disagreed with a row meanwhile
        raise SnapshotDistrusted(distrusted_message("a vector it holds disagrees with the model's"))
    log.info("snapshot: %d of its vectors compared with this machine's own, all agree", checked)


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
    content before. Never raises: a snapshot that cannot be used, or lies, is a status message,
    and indexing embeds as it would without one."""
    t0 = time.monotonic()
    try:
        path = _download(source, cache_root / "snapshots", max_bytes, timeout) if is_url(source) else Path(source)
        with snap.open_verified(path.expanduser(), identity, max_bytes) as f, _LOCK:
            content = f"{identity.model}|{identity.dimension}|{identity.embed_format}|{f.sha256}"
            sid, state, reason = cache.begin_snapshot(content, source, len(f))
            if state == "distrusted":
                raise SnapshotDistrusted(distrusted_message(reason or "distrusted before"))
            if state == "importing":
                try:
                    _insert(f, cache, sid, name_key)
                except SnapshotDistrusted:
                    raise
                except BaseException:
                    cache.forget_snapshot(sid)  # unreadable half-way: nothing of it stays
                    raise
            report.vectors, report.snapshot, report.info = len(f), sid, snap.summary(f)
        report.state = "imported"
        log.info("snapshot %s: %d vectors ready in %.1fs", source, report.vectors, time.monotonic() - t0)
    except SnapshotDistrusted as exc:
        report.state, report.message, report.distrusted = "failed", str(exc), True
        log.warning("snapshot %s not used: %s", source, exc)
    except snap.SnapshotError as exc:
        report.state, report.message = "failed", str(exc)
        log.warning("snapshot %s not used: %s", source, exc)
    except Exception as exc:  # a network or disk failure: indexing goes on without it
        report.state, report.message = "failed", f"cannot read snapshot {source}: {exc}"
        log.warning("%s", report.message)
    return report
