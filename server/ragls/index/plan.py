"""What a scan has to do, decided from what is known, without I/O: which files to prepare
(read, chunk, store), which indexed files are gone, which content skips still hold. The worker
carries the plan out (lexical_pass.py, apply.py)."""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass

from ragls.ingest.discovery import SourceFile
from ragls.store.manifest import DENSE, FileRecord, SkippedFile


@dataclass
class ScanPlan:
    todo: list[str]  # to prepare: open files first, then the most recently modified
    removed: list[str]  # indexed, not found any more (deleted, or ignored now)
    unchanged_skips: dict[str, str]  # skipped for their content last time, unchanged since: why
    forgotten_skips: list[str]  # kept content skips whose files are gone or ignored now


def plan_scan(
    found: Mapping[str, SourceFile],
    records: Mapping[str, FileRecord],
    known_skips: Mapping[str, SkippedFile],
    open_docs: Container[str],
    stale: Container[str],
) -> ScanPlan:
    """`found`: the files discovery found (path -> file); `stale`: files prepared under older
    rules. A file is prepared again when it is open in an editor, new, or its size or mtime
    changed (a stat is the whole test: unchanged files cost nothing)."""
    todo: list[str] = []
    unchanged_skips: dict[str, str] = {}
    for rel, f in found.items():
        rec = records.get(rel)
        known = known_skips.get(rel) if rec is None and rel not in open_docs else None
        if known is not None and known.size == f.size and known.mtime_ns == f.mtime_ns:
            unchanged_skips[rel] = known.reason  # skipped last time, unchanged since
        elif rel in open_docs or rec is None or rec.size != f.size or rec.mtime_ns != f.mtime_ns or rel in stale:
            todo.append(rel)
    # Open files first, then the most recently modified: what the user asks about next.
    todo.sort(key=lambda r: (r not in open_docs, -found[r].mtime_ns))
    return ScanPlan(
        todo=todo,
        removed=[p for p in records if p not in found],
        unchanged_skips=unchanged_skips,
        forgotten_skips=[p for p in known_skips if p not in found],
    )


def is_complete(rel: str, old: FileRecord | None, buffer: str | None, missing_dense: Container[str]) -> bool:
    """Is the stored version `old` of `rel` whole (so equal content needs no work)? `buffer`:
    the file's open editor buffer, if any."""
    return (
        old is not None and buffer is None and not old.pending_ids and rel not in missing_dense and old.status == DENSE
    )
