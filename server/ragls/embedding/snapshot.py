"""Index snapshots: the dense vectors a fresh machine would otherwise compute, in one compact,
versioned, content-addressed file that CI and teammates share (docs/scaling.md).

A snapshot maps the hash of each chunk's embedded text (chunking.model.embedding_hash, which
already covers the text format) to its vector, and the same hash to the chunk's name vector
(name_rerank), for one embedder identity. It holds no source text: a hash is only useful to
someone who has the code. Importing puts the vectors into the embedding cache, from where
indexing takes them as it takes any cached vector, so a chunk whose text changed since the
snapshot is simply embedded as usual.

The file is untrusted input (a download, an artifact): it is parsed, never executed (no
pickle), bounded in size, checked against its own checksum and header before a vector is used,
and refused whole when it was made by another model, dimension or text format.

Layout (little-endian):
    MAGIC (8 bytes) | header length (u32) | header (UTF-8 JSON) | body
    body = hashes (n x 16 bytes) | scales (n x f32) | vectors (n x dim x i8)
           | name hashes (m x 16) | name scales (m x f32) | name vectors (m x dim x i8)
Vectors are quantised to int8 with one scale per vector (max |component| / 127): 404 bytes
per vector at 384 dimensions, cosine to the original above 0.9999.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

if TYPE_CHECKING:
    import numpy as np

    from ragls.embedding.cache import EmbeddingCache

MAGIC = b"RAGLSNP\x01"
FORMAT = 1
MAX_HEADER = 64 * 1024
# 4 million vectors of 384 dimensions, plus their name vectors: far above any one repository.
DEFAULT_MAX_BYTES = 4 * 1024**3
HASH_BYTES = 16
_BATCH = 20_000


class SnapshotError(ValueError):
    """The snapshot cannot be used; the message says why, for the user."""


class SnapshotMismatch(SnapshotError):
    """A valid snapshot made by another embedder, dimension or text format."""


@dataclass(frozen=True)
class Identity:
    """What a vector depends on besides the text: vectors of two identities never mix."""

    model: str
    dimension: int
    embed_format: str

    def describe(self) -> str:
        return f"{self.model} ({self.dimension}-d, embedding text format {self.embed_format})"


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    format: int = Field(ge=1)
    model: str = Field(min_length=1, max_length=200)
    dimension: int = Field(ge=1, le=8192)
    embed_format: str = Field(min_length=1, max_length=20)
    quantization: str
    vectors: int = Field(ge=0, le=1 << 32)
    names: int = Field(ge=0, le=1 << 32)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created: str = Field(default="", max_length=64)
    source: str = Field(default="", max_length=500)


@dataclass
class Snapshot:
    identity: Identity
    hashes: list[str]  # hex, as the embedding cache keys them
    vectors: np.ndarray  # (n, dim) float32, dequantised
    name_hashes: list[str]
    name_vectors: np.ndarray  # (m, dim) float32
    created: str = ""
    source: str = ""

    def __len__(self) -> int:
        return len(self.hashes)


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 per vector, symmetric: (codes, scales) with vectors ~= codes * scales[:, None]."""
    import numpy as np

    v = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(v).max(axis=1) if len(v) else np.zeros(0, np.float32)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(v / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales


def _pack(items: dict[str, np.ndarray], dim: int) -> tuple[bytes, bytes, bytes]:
    import numpy as np

    keys = sorted(items)
    hashes = b"".join(bytes.fromhex(k) for k in keys)
    mat = np.stack([np.asarray(items[k], dtype=np.float32) for k in keys]) if keys else np.zeros((0, dim), np.float32)
    codes, scales = quantise(mat)
    return hashes, scales.astype("<f4").tobytes(), codes.tobytes()


def _usable_hash(h: str) -> bool:
    try:
        return len(bytes.fromhex(h)) == HASH_BYTES
    except ValueError:
        return False


def write(
    path: Path,
    identity: Identity,
    vectors: dict[str, np.ndarray],
    names: dict[str, np.ndarray] | None = None,
    source: str = "",
) -> dict[str, int]:
    """Write a snapshot atomically (a temporary file renamed over `path`). Vectors whose key is
    not a 16-byte hex hash or whose dimension differs are left out. Returns the counts and size."""
    import datetime

    def keep(items: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {
            k: v for k, v in items.items() if _usable_hash(k) and getattr(v, "shape", (0,))[-1] == identity.dimension
        }

    main, named = keep(vectors), keep(names or {})
    parts = [*_pack(main, identity.dimension), *_pack(named, identity.dimension)]
    digest = hashlib.sha256()
    for p in parts:
        digest.update(p)
    header = _Header(
        format=FORMAT,
        model=identity.model,
        dimension=identity.dimension,
        embed_format=identity.embed_format,
        quantization="int8",
        vectors=len(main),
        names=len(named),
        sha256=digest.hexdigest(),
        created=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        source=source[:500],
    )
    head = header.model_dump_json().encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".snapshot-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + struct.pack("<I", len(head)) + head)
            for p in parts:
                fh.write(p)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return {"vectors": len(main), "names": len(named), "bytes": path.stat().st_size}


def _read_exact(fh: BinaryIO, n: int, what: str) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise SnapshotError(f"not a ragls snapshot, or truncated: {what} is cut short")
    return data


def read(path: Path, expect: Identity | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Snapshot:
    """Parse and verify a snapshot file. Raises SnapshotError (malformed, truncated, corrupted,
    too large) or SnapshotMismatch (another embedder identity than `expect`)."""
    import numpy as np

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SnapshotError(f"cannot read snapshot {path}: {exc.strerror or exc}") from exc
    if size > max_bytes:
        raise SnapshotError(f"snapshot {path} is {size:,} bytes, over the limit of {max_bytes:,}")
    with open(path, "rb") as fh:
        if fh.read(len(MAGIC)) != MAGIC:
            raise SnapshotError(f"{path} is not a ragls snapshot (format {FORMAT})")
        (head_len,) = struct.unpack("<I", _read_exact(fh, 4, "the header length"))
        if head_len > MAX_HEADER:
            raise SnapshotError(f"snapshot header of {head_len:,} bytes is over the limit of {MAX_HEADER:,}")
        try:
            header = _Header.model_validate(json.loads(_read_exact(fh, head_len, "the header").decode("utf-8")))
        except (ValueError, ValidationError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise SnapshotError(f"snapshot header is invalid: {str(exc).splitlines()[0]}") from exc
        if header.format != FORMAT or header.quantization != "int8":
            raise SnapshotError(f"snapshot format {header.format}/{header.quantization} is not supported")
        identity = Identity(header.model, header.dimension, header.embed_format)
        if expect is not None and identity != expect:
            raise SnapshotMismatch(
                f"snapshot was made with {identity.describe()}; this index uses {expect.describe()}. "
                "Export a new snapshot with this ragls version and embedder."
            )
        dim, n, m = header.dimension, header.vectors, header.names
        per = HASH_BYTES + 4 + dim
        body = len(MAGIC) + 4 + head_len + (n + m) * per
        if body != size:
            raise SnapshotError(f"snapshot is {size:,} bytes but its header describes {body:,}: truncated or altered")
        digest = hashlib.sha256()

        def take(nbytes: int, what: str) -> bytes:
            data = _read_exact(fh, nbytes, what)
            digest.update(data)
            return data

        def section(count: int, what: str) -> tuple[list[str], np.ndarray]:
            raw = take(count * HASH_BYTES, what + " hashes")
            hashes = [raw[i : i + HASH_BYTES].hex() for i in range(0, len(raw), HASH_BYTES)]
            scales = np.frombuffer(take(count * 4, what + " scales"), dtype="<f4").astype(np.float32)
            codes = np.frombuffer(take(count * dim, what + " vectors"), dtype=np.int8).reshape(count, dim)
            if count and not (np.isfinite(scales).all() and (scales > 0).all()):
                raise SnapshotError(f"snapshot {what} scales are invalid")
            return hashes, codes.astype(np.float32) * scales[:, None]

        hashes, vectors = section(n, "vector")
        name_hashes, name_vectors = section(m, "name vector")
        if digest.hexdigest() != header.sha256:
            raise SnapshotError("snapshot checksum does not match its content: corrupted or altered")
    return Snapshot(identity, hashes, vectors, name_hashes, name_vectors, header.created, header.source)


def into_cache(snap: Snapshot, cache: EmbeddingCache, name_key: str) -> int:
    """Put the snapshot's vectors into the embedding cache (name vectors under `name_key` +
    hash, as name_rerank looks them up). Returns how many chunk vectors it holds."""
    for start in range(0, len(snap.hashes), _BATCH):
        cache.put_many(
            dict(zip(snap.hashes[start : start + _BATCH], snap.vectors[start : start + _BATCH], strict=True))
        )
    for start in range(0, len(snap.name_hashes), _BATCH):
        part = snap.name_hashes[start : start + _BATCH]
        cache.put_many({name_key + h: v for h, v in zip(part, snap.name_vectors[start : start + _BATCH], strict=True)})
    return len(snap.hashes)


def from_cache(
    hashes: Iterable[str], cache: EmbeddingCache, name_key: str
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The cached vectors and name vectors of `hashes` (those the cache holds)."""
    keys = sorted(set(hashes))
    vectors: dict[str, np.ndarray] = {}
    names: dict[str, np.ndarray] = {}
    for start in range(0, len(keys), _BATCH):
        part = keys[start : start + _BATCH]
        vectors.update(cache.get_many(part, count=False))
        named = cache.get_many([name_key + h for h in part], count=False)
        names.update({k[len(name_key) :]: v for k, v in named.items()})
    return vectors, names


def summary(snap: Snapshot) -> dict[str, Any]:
    return {
        "model": snap.identity.model,
        "dimension": snap.identity.dimension,
        "embedFormat": snap.identity.embed_format,
        "vectors": len(snap.hashes),
        "names": len(snap.name_hashes),
        "created": snap.created,
        "source": snap.source,
    }
