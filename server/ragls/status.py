"""The one `IndexStatus`: assembled here for rag/indexStatus, rag/statusChanged, `$/progress`
and the CLI (`ragls index`, `ragls search --status`), so every face reports the same shape."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragls import __version__
from ragls.config import Settings
from ragls.protocol import (
    CacheInfo,
    EmbedderInfo,
    ErrorOut,
    FolderStatus,
    IndexStatus,
    Progress,
    SnapshotInfo,
    StoreInfo,
)

if TYPE_CHECKING:
    from ragls.embedding import Embedder
    from ragls.ingest.watcher import Watcher
    from ragls.store import Store


@dataclass
class ErrorEntry:
    path: str
    message: str
    time: str


@dataclass(frozen=True)
class SnapshotCounts:
    """The `embedder.snapshot` import, as the status shows it."""

    source: str
    state: str
    vectors: int
    reused: int
    message: str | None


@dataclass(frozen=True)
class IndexCounters:
    """One consistent reading of the index (taken under the lock), for `status.index_status`."""

    state: str  # "indexing", "ready" or "error"
    phase: str
    message: str | None
    files_total: int
    files_indexed: int  # searchable both ways, not failed
    files_failed: int
    skipped_by_reason: dict[str, int]
    chunks: int
    lexical_done: int
    searchable: int  # the files that can be indexed: the total of both progress counts
    last_indexed_at: str | None
    cache_hits: int
    cache_misses: int
    embedded: int
    snapshot: SnapshotCounts | None
    errors: tuple[ErrorEntry, ...]
    workspace: str
    warnings: tuple[str, ...] = ()  # e.g. a snapshot distrusted (handle.warnings)
    waiting: int = 0  # files discovered and not indexed yet, failures aside (graph answers warn)


def embedder_info(settings: Settings, emb: Embedder | None = None) -> EmbedderInfo:
    """The open embedder, or what the settings ask for before it is open (dimension 0)."""
    if emb is not None:
        device = getattr(emb, "device", None)  # the bundled model's; HTTP providers have none
        return EmbedderInfo(provider=emb.provider, model=emb.model_id, dimension=emb.dimension, device=device)
    return EmbedderInfo(provider=settings.embedder.provider, model=settings.embedder.model, dimension=0)


def store_info(settings: Settings, store: Store | None = None) -> StoreInfo:
    if store is not None:
        return StoreInfo(kind=store.kind, location=store.location)
    return StoreInfo(kind="remote" if settings.qdrant.url else "edge", location="")


def index_status(c: IndexCounters, settings: Settings, embedder: Embedder | None, store: Store | None) -> IndexStatus:
    """An index's counters (IndexState.counters) as its status; build_status adds the rest."""
    hits, misses = c.cache_hits, c.cache_misses
    snap = c.snapshot
    return IndexStatus(
        state=c.state,  # type: ignore[arg-type]
        phase=c.phase,
        files_total=c.files_total,
        files_indexed=c.files_indexed,
        files_failed=c.files_failed,
        files_skipped=sum(c.skipped_by_reason.values()),
        skipped_by_reason=dict(c.skipped_by_reason),
        chunks=c.chunks,
        lexical=Progress(done=c.lexical_done, total=c.searchable),
        dense=Progress(done=c.files_indexed, total=c.searchable),
        last_indexed_at=c.last_indexed_at,
        embedder=embedder_info(settings, embedder),
        store=store_info(settings, store),
        cache=CacheInfo(hits=hits, misses=misses, hit_rate=round(hits / (hits + misses), 4) if hits + misses else 0.0),
        embedded=c.embedded,
        snapshot=None
        if snap is None
        else SnapshotInfo(
            source=snap.source,
            state=snap.state,  # type: ignore[arg-type]
            vectors=snap.vectors,
            reused=snap.reused,
            message=snap.message,
        ),
        errors=[ErrorOut(path=e.path, message=e.message, time=e.time) for e in c.errors],
        workspace=c.workspace,
        message=c.message,
        warnings=[*([w] if (w := getattr(embedder, "device_warning", "")) else []), *c.warnings],
    )


def build_status(
    root: Path | None,
    settings: Settings,
    index: IndexStatus | None = None,
    *,
    settings_error: str | None = None,
    warnings: list[str] | None = None,
    watcher: Watcher | None = None,
) -> IndexStatus:
    """The index's own status (`Indexer.snapshot()`; zeros before it runs) plus what only the
    caller knows: a settings problem, settings warnings and the watcher's health."""
    if index is not None:
        st = index
    else:
        st = IndexStatus(
            state="error" if settings_error else "indexing",
            phase="error" if settings_error else "starting",
            embedder=embedder_info(settings),
            store=store_info(settings),
        )
    st = st.model_copy(
        update={
            "workspace": str(root or ""),
            "version": __version__,
            "message": st.message or settings_error or (watcher.problem if watcher else None),
            "warnings": list(dict.fromkeys([*st.warnings, *(warnings or [])])),
            "watching": watcher.watching if watcher else False,
        }
    )
    if root is not None:  # a folder opened alone is a workspace of one folder, named as its directory
        st.folders = [folder_entry(root.name, root.as_uri(), root, st)]
    return st


def starting_status(root: Path | None, settings: Settings, message: str | None) -> IndexStatus:
    """The status before an index exists: starting, or an error when `message` says why not."""
    return build_status(root, settings, None, settings_error=message)


def folder_entry(name: str, uri: str, path: Path, st: IndexStatus, nested_in: str | None = None) -> FolderStatus:
    """A folder's line in `IndexStatus.folders`: its index's counters, or (nested in the folder
    that indexes it) that folder's state with zero counters."""
    where = FolderStatus(name=name, uri=uri, path=str(path), state=st.state, phase=st.phase)
    if nested_in is not None:
        return where.model_copy(update={"message": f"inside {nested_in}, indexed with it", "nested_in": nested_in})
    return where.model_copy(
        update={
            "files_total": st.files_total,
            "files_indexed": st.files_indexed,
            "files_failed": st.files_failed,
            "chunks": st.chunks,
            "lexical": st.lexical,
            "dense": st.dense,
            "errors": list(st.errors),
            "message": st.message,
        }
    )


def workspace_status(parts: list[tuple[FolderStatus, IndexStatus | None]]) -> IndexStatus:
    """The workspace's status: totals over its indexed folders (`IndexStatus` of each, None for a
    nested folder) plus every folder's entry, in workspace order (docs/protocol.md)."""
    own = [(f, st) for f, st in parts if st is not None]
    entries = [f for f, _ in parts]
    if len(parts) == 1 and own:  # one folder: exactly its own status
        return own[0][1].model_copy(update={"folders": entries})
    assert own, "a workspace always has an indexed folder"
    sts = [st for _, st in own]
    first = sts[0]
    if any(st.state == "indexing" for st in sts):
        state = "indexing"
        phase = next(st.phase for st in sts if st.state == "indexing")
    elif any(st.state == "error" for st in sts):
        state = "error"
        phase = next(st.phase for st in sts if st.state == "error")
    else:
        state, phase = "ready", first.phase
    reasons: dict[str, int] = {}
    for st in sts:
        for reason, n in st.skipped_by_reason.items():
            reasons[reason] = reasons.get(reason, 0) + n
    hits, misses = sum(st.cache.hits for st in sts), sum(st.cache.misses for st in sts)
    messages = [f"{f.name}: {st.message}" for f, st in own if st.message]
    warnings = list(dict.fromkeys(w for st in sts for w in st.warnings))
    return first.model_copy(
        update={
            "state": state,
            "phase": phase,
            "files_total": sum(st.files_total for st in sts),
            "files_indexed": sum(st.files_indexed for st in sts),
            "files_failed": sum(st.files_failed for st in sts),
            "files_skipped": sum(st.files_skipped for st in sts),
            "skipped_by_reason": reasons,
            "chunks": sum(st.chunks for st in sts),
            "lexical": _sum_progress([st.lexical for st in sts]),
            "dense": _sum_progress([st.dense for st in sts]),
            "last_indexed_at": max((st.last_indexed_at for st in sts if st.last_indexed_at), default=None),
            "cache": CacheInfo(
                hits=hits, misses=misses, hit_rate=round(hits / (hits + misses), 4) if hits + misses else 0.0
            ),
            "embedded": sum(st.embedded for st in sts),
            "snapshot": _sum_snapshots(sts),
            "errors": [
                ErrorOut(path=f"{f.name}/{e.path}", message=e.message, time=e.time) for f, st in own for e in st.errors
            ],
            "message": "; ".join(messages) or None,
            "warnings": warnings,
            "watching": all(st.watching for st in sts),
            "workspace": entries[0].path,
            "folders": entries,
        }
    )


def _sum_progress(ps: list[Progress]) -> Progress:
    return Progress(done=sum(p.done for p in ps), total=sum(p.total for p in ps))


# Readiness, decided here once for every front end (docs/protocol.md, "Index status"):
# - open: the index answers (a folder's `ready` event; `WorkspaceIndex` waits for it);
# - searchable: every file is findable, at least by keyword (MCP tools wait for it);
# - settled: nothing left to index without outside help (`ragls index` waits for it).


def searchable(st: IndexStatus) -> bool:
    """Past the first keyword pass (or not indexing at all): every file is findable, at least
    by keyword."""
    return not indexing(st) or (
        st.phase not in ("starting", "discovering") and st.files_total > 0 and st.lexical.done >= st.lexical.total
    )


def indexing(st: IndexStatus) -> bool:
    """Work is left that the index does by itself; False once `ready` or in `error`."""
    return st.state == "indexing"


def progress_message(st: IndexStatus) -> str:
    """The `n/N files` text of a running index (`$/progress` reports and `ragls index`)."""
    if not st.files_total:
        return "discovering files"
    if st.phase == "lexical":
        return f"{st.lexical.done + st.files_failed}/{st.files_total} files (lexical)"
    return f"{st.dense.done + st.files_failed}/{st.files_total} files"


def progress_detail(st: IndexStatus) -> str:
    """Both passes in words, for a caller that waits (the MCP tools' progress notifications)."""
    if not st.files_total:
        return f"indexing {st.workspace}: discovering files"
    return (
        f"indexing {st.workspace}: {st.lexical.done}/{st.files_total} files keyword-indexed, "
        f"{st.dense.done}/{st.files_total} embedded"
    )


def progress_percentage(st: IndexStatus) -> int:
    """Lexical and dense each count for half: the slower dense phase ends at 100."""
    total = max(st.files_total, 1)
    return int(100 * (st.lexical.done + st.dense.done + 2 * st.files_failed) / (2 * total))


def progress_end_message(st: IndexStatus) -> str:
    end = (
        f"{st.files_indexed} files, {st.chunks} chunks"
        if st.state == "ready"
        else f"error: {st.message or 'see rag/indexStatus'}"
    )
    if st.files_failed:
        end += f", {st.files_failed} failed"
    return end


def _sum_snapshots(sts: list[IndexStatus]) -> SnapshotInfo | None:
    """The folders' snapshot (one user setting, so one source): the first one's, with the
    chunks every folder took from it."""
    snaps = [st.snapshot for st in sts if st.snapshot is not None]
    if not snaps:
        return None
    return snaps[0].model_copy(update={"reused": sum(s.reused for s in snaps)})
