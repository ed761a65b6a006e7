"""`ragls snapshot export`: the vectors of a workspace's current chunks, from the embedding cache,
into a snapshot file (embedding/snapshot.py).

The chunks are found the way the indexer finds them (discovery's rules, the same preparation of
each file), so the snapshot holds exactly what a fresh machine would have to embed for these
files; their vectors come from the embedding cache, which indexing the folder fills.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragls.chunking.model import EMBED_FORMAT
from ragls.config import Settings, cache_root
from ragls.embedding import model_identity
from ragls.embedding.cache import EmbeddingCache
from ragls.embedding.snapshot import Identity, from_cache, write
from ragls.index import name_rerank
from ragls.ingest.discovery import discover
from ragls.ingest.prepare import FileJob, prepare_file


def identity_of(settings: Settings) -> Identity:
    model_id, dimension = model_identity(settings.embedder)
    return Identity(model_id, dimension, EMBED_FORMAT)


def workspace_hashes(root: Path, settings: Settings) -> list[str]:
    """The text hash of every chunk the index of `root` holds for its files as they are now."""
    found = discover(root, settings)
    hashes: list[str] = []
    for f in found.files:
        prepared = prepare_file(
            str(root), FileJob(f.rel, f.language, None, None), settings.indexing, settings.max_file_bytes
        )
        # A file the indexer skips (generated, minified, binary, too large) has no chunks.
        hashes.extend(c.text_hash for c in prepared.chunks or ())
    return hashes


def export(root: Path, settings: Settings, out: Path) -> dict[str, Any]:
    """Write the snapshot of `root` to `out`; returns counts (chunks, vectors, missing, bytes)."""
    identity = identity_of(settings)
    hashes = workspace_hashes(root, settings)
    cache = EmbeddingCache(cache_root(settings) / "embeddings.sqlite", identity.model, identity.dimension)
    try:
        vectors, names = from_cache(hashes, cache, name_rerank.NAME_KEY)
    finally:
        cache.close()
    written = write(out, identity, vectors, names, source=root.name)
    unique = set(hashes)
    return {
        "chunks": len(hashes),
        "unique": len(unique),
        "missing": len(unique - vectors.keys()),
        **written,
        "bytesPerChunk": round(written["bytes"] / max(1, len(unique)), 1),
        "model": identity.model,
        "dimension": identity.dimension,
        "embedFormat": identity.embed_format,
    }
