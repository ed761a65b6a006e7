"""Index snapshots: the dense vectors a fresh machine would otherwise compute, in one compact,
versioned, content-addressed file that CI and teammates share (docs/scaling.md).

A snapshot maps the hash of each chunk's embedded text (chunking.model.embedding_hash, which
already covers the text format) to its vector, and the same hash to the chunk's name vector
(name_rerank), for one embedder identity. It holds no source text: a hash is only useful to
someone who has the code. An import (snapshot_source.py) puts the vectors beside the embedding
cache's own, never over them (embedding/cache.py), and indexing checks a sample of those it
takes against the model (index/backfill.py); a chunk whose text changed since the snapshot is
simply embedded as usual.

The file is untrusted input (a download, an artifact): it is parsed, never executed (no
pickle), bounded in size, checked against its own checksum and header in one streaming pass
before a vector is used, read a batch at a time, and refused whole when it was made by another
model, dimension or text format. A well-formed file can still lie about its vectors: that is
what the import and indexing check (docs/security.md).

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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
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
# Vectors per batch of an import: ~13 MB of float32 and row bytes at 384 dimensions, all of the
# import's memory beyond the interpreter's, whatever the file's size (issue 51: a 231 MiB file
# took 1.8 GB when it was read whole).
_BATCH = 4_096
_BLOCK = 1 << 20  # bytes per read of the checksum pass (a multiple of 4: whole scales)


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


@dataclass(frozen=True)
class Section:
    """Where one kind of vector lies in the file: `count` hashes, then their scales, then their
    int8 codes."""

    what: str  # "vector" or "name vector", for messages
    count: int
    at: int  # file offset of the hashes

    def scales_at(self) -> int:
        return self.at + self.count * HASH_BYTES

    def codes_at(self) -> int:
        return self.scales_at() + self.count * 4


def _fingerprint(fd: int) -> tuple[int, int, int, int]:
    """What changes when a file is written in place (its writer cannot set ctime back)."""
    st = os.fstat(fd)
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class SnapshotFile:
    """A snapshot whose header and checksum were verified, open, its vectors read a batch at a
    time: an import holds one batch, never the whole file."""

    def __init__(self, fh: BinaryIO, header: _Header, body_at: int, fingerprint: tuple[int, int, int, int]) -> None:
        self._fh = fh
        self._fingerprint = fingerprint
        self.identity = Identity(header.model, header.dimension, header.embed_format)
        self.sha256 = header.sha256
        self.created = header.created
        self.source = header.source
        per = HASH_BYTES + 4 + header.dimension
        self.vectors = Section("vector", header.vectors, body_at)
        self.names = Section("name vector", header.names, body_at + header.vectors * per)

    def __len__(self) -> int:
        return self.vectors.count

    def _pread(self, n: int, at: int, what: str) -> bytes:
        data = os.pread(self._fh.fileno(), n, at)
        if len(data) != n:
            raise SnapshotError(f"snapshot changed while it was read: {what} is cut short")
        return data

    def batches(self, section: Section, size: int = _BATCH) -> Iterator[tuple[list[str], np.ndarray]]:
        """(hashes, float32 vectors) of `section`, `size` at a time, in file order."""
        import numpy as np

        dim = self.identity.dimension
        for start in range(0, section.count, size):
            n = min(size, section.count - start)
            raw = self._pread(n * HASH_BYTES, section.at + start * HASH_BYTES, f"the {section.what} hashes")
            hashes = [raw[i : i + HASH_BYTES].hex() for i in range(0, len(raw), HASH_BYTES)]
            scales = np.frombuffer(self._pread(n * 4, section.scales_at() + start * 4, "the scales"), dtype="<f4")
            codes = np.frombuffer(self._pread(n * dim, section.codes_at() + start * dim, "the vectors"), np.int8)
            _check_scales(scales, section.what)  # verified already, but the file may have changed since
            yield hashes, codes.reshape(n, dim).astype(np.float32) * scales.astype(np.float32)[:, None]

    def check_unchanged(self) -> None:
        """After the batches: the bytes read were the bytes whose checksum was verified."""
        if _fingerprint(self._fh.fileno()) != self._fingerprint:
            raise SnapshotError("snapshot changed while it was read; import it again")

    def close(self) -> None:
        self._fh.close()


def _check_scales(scales: np.ndarray, what: str) -> None:
    import numpy as np

    if len(scales) and not (np.isfinite(scales).all() and (scales > 0).all()):
        raise SnapshotError(f"snapshot {what} scales are invalid")


def _verify_body(fh: BinaryIO, sections: tuple[Section, ...], dim: int, sha256: str) -> None:
    """One streaming pass over the body, a block at a time: the checksum, and every scale finite
    and positive. Nothing is kept."""
    import numpy as np

    digest = hashlib.sha256()
    for section in sections:
        for part, nbytes in (("hashes", section.count * HASH_BYTES), ("scales", section.count * 4)):
            left = nbytes
            while left:
                block = _read_exact(fh, min(left, _BLOCK), f"the {section.what} {part}")
                digest.update(block)
                if part == "scales":  # blocks are a multiple of 4 bytes: whole scales
                    _check_scales(np.frombuffer(block, dtype="<f4"), section.what)
                left -= len(block)
        left = section.count * dim
        while left:
            block = _read_exact(fh, min(left, _BLOCK), f"the {section.what}s")
            digest.update(block)
            left -= len(block)
    if digest.hexdigest() != sha256:
        raise SnapshotError("snapshot checksum does not match its content: corrupted or altered")


def _header(fh: BinaryIO, path: Path, size: int, expect: Identity | None) -> tuple[_Header, int]:
    """The header, checked against the file's size and `expect`; and where the body starts."""
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
    body_at = len(MAGIC) + 4 + head_len
    body = body_at + (header.vectors + header.names) * (HASH_BYTES + 4 + header.dimension)
    if body != size:
        raise SnapshotError(f"snapshot is {size:,} bytes but its header describes {body:,}: truncated or altered")
    return header, body_at


@contextmanager
def open_verified(
    path: Path, expect: Identity | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Iterator[SnapshotFile]:
    """Verify a snapshot file (size, header, identity, then checksum and scales in one streaming
    pass) and yield it open, for reading its vectors in batches. Raises SnapshotError (malformed,
    truncated, corrupted, too large) or SnapshotMismatch (another embedder identity than
    `expect`)."""
    try:
        fh = open(path, "rb")  # closed below, or by the SnapshotFile
    except OSError as exc:
        raise SnapshotError(f"cannot read snapshot {path}: {exc.strerror or exc}") from exc
    try:
        fingerprint = _fingerprint(fh.fileno())
        if fingerprint[1] > max_bytes:
            raise SnapshotError(f"snapshot {path} is {fingerprint[1]:,} bytes, over the limit of {max_bytes:,}")
        header, body_at = _header(fh, path, fingerprint[1], expect)
        snap = SnapshotFile(fh, header, body_at, fingerprint)
        _verify_body(fh, (snap.vectors, snap.names), header.dimension, header.sha256)
    except BaseException:
        fh.close()
        raise
    try:
        yield snap
    finally:
        snap.close()


def read(path: Path, expect: Identity | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Snapshot:
    """A whole snapshot in memory, for tests and tools (an import streams it: `open_verified`).
    Raises as `open_verified`."""
    import numpy as np

    with open_verified(path, expect, max_bytes) as f:
        parts: list[tuple[list[str], np.ndarray]] = []
        for section in (f.vectors, f.names):
            hashes: list[str] = []
            mats = [np.zeros((0, f.identity.dimension), np.float32)]
            for h, m in f.batches(section):
                hashes += h
                mats.append(m)
            parts.append((hashes, np.concatenate(mats)))
        f.check_unchanged()
    (hashes, vectors), (name_hashes, name_vectors) = parts
    return Snapshot(f.identity, hashes, vectors, name_hashes, name_vectors, f.created, f.source)


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


def summary(snap: SnapshotFile) -> dict[str, Any]:
    return {
        "model": snap.identity.model,
        "dimension": snap.identity.dimension,
        "embedFormat": snap.identity.embed_format,
        "vectors": snap.vectors.count,
        "names": snap.names.count,
        "created": snap.created,
        "source": snap.source,
    }
