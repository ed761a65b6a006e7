"""Consistency checker: compares the store and manifest with the workspace on disk.

Used by `ragls check PATH` and by the crash tests. An index is *consistent* when no chunk
is orphaned, missing or duplicated and no deleted file has chunks left; it is *current*
when, in addition, every indexable file is stored with its current content hash."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ragls.config import Settings
from ragls.embedding import model_identity
from ragls.ingest.discovery import discover, read_source
from ragls.store import open_index
from ragls.store.manifest import DENSE, LEXICAL, Manifest


@dataclass
class CheckReport:
    files_on_disk: int = 0
    files_current: int = 0  # stored with the hash the file has now
    files_queued: list[str] = field(default_factory=list)  # new, changed or interrupted: next run redoes them
    files_without_dense: list[str] = field(default_factory=list)
    orphan_chunks: int = 0  # in the store, owned by no file
    missing_chunks: list[str] = field(default_factory=list)  # files whose chunks are not all stored
    deleted_files_with_chunks: list[str] = field(default_factory=list)
    duplicate_chunks: int = 0
    chunks: int = 0

    @property
    def consistent(self) -> bool:
        # Chunks of a file deleted while no server ran are queued work, not damage.
        return not (self.orphan_chunks or self.missing_chunks or self.duplicate_chunks)

    @property
    def current(self) -> bool:
        return (
            self.consistent
            and not self.files_queued
            and not self.files_without_dense
            and not self.deleted_files_with_chunks
        )

    def as_dict(self) -> dict[str, object]:
        d = dict(self.__dict__)
        d.update(consistent=self.consistent, current=self.current)
        return d


def check_index(root: Path, settings: Settings) -> CheckReport:
    root = root.resolve()
    model_id, dim = model_identity(settings.embedder)
    # Never a fallback slot: checking a fresh, empty alt-N index would report a false "consistent".
    store, manifest_path, _ = open_index(root, settings, model_id, dim, fallback=False)
    manifest = Manifest(manifest_path)
    try:
        return _compare(root, settings, store.all_ids(), manifest, store)
    finally:
        manifest.close()
        store.close()


def _compare(
    root: Path, settings: Settings, stored: dict[str, tuple[str, bool]], manifest: Manifest, store: object
) -> CheckReport:
    rep = CheckReport(chunks=len(stored))
    records = manifest.all()
    disk = {}
    for f in discover(root, settings).files:
        res = read_source(f.path, settings.max_file_bytes, root)
        if res.skip is None:
            disk[f.rel] = res.digest
    rep.files_on_disk = len(disk)
    owned: set[str] = set()
    for path, rec in records.items():
        owned |= set(rec.chunk_ids) | set(rec.pending_ids)
        interrupted = bool(rec.pending_ids) or rec.status not in (LEXICAL, DENSE)
        if not interrupted and not set(rec.chunk_ids) <= stored.keys():
            rep.missing_chunks.append(path)
        if path not in disk:
            if any(i in stored for i in rec.chunk_ids):
                rep.deleted_files_with_chunks.append(path)
            continue
        if interrupted or rec.hash != disk[path]:
            rep.files_queued.append(path)
            continue
        rep.files_current += 1
        if any(i in stored and not stored[i][1] for i in rec.chunk_ids):
            rep.files_without_dense.append(path)
    rep.files_queued += sorted(p for p in disk if p not in records)
    rep.orphan_chunks = sum(1 for i in stored if i not in owned)
    # The same chunk stored twice under two ids would show up twice in answers.
    hits = store.retrieve(list(stored))  # type: ignore[attr-defined]
    keys = Counter(
        (h.payload.get("path"), h.payload.get("start_line"), h.payload.get("end_line"), h.payload.get("text_hash"))
        for h in hits
    )
    rep.duplicate_chunks = sum(n - 1 for n in keys.values() if n > 1)
    # A file whose chunks belong to a deleted path (owned but file gone) is caught above.
    return rep
