"""The one `IndexStatus`: assembled here for rag/indexStatus, rag/statusChanged, `$/progress`
and the CLI (`ragls index`, `ragls search --status`), so every face reports the same shape."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragls import __version__
from ragls.config import Settings
from ragls.protocol import EmbedderInfo, IndexStatus, StoreInfo

if TYPE_CHECKING:
    from ragls.embedding import Embedder
    from ragls.indexer import Indexer
    from ragls.store import Store
    from ragls.watcher import Watcher


def embedder_info(settings: Settings, emb: Embedder | None = None) -> EmbedderInfo:
    """The open embedder, or what the settings ask for before it is open (dimension 0)."""
    if emb is not None:
        return EmbedderInfo(provider=emb.provider, model=emb.model_id, dimension=emb.dimension)
    return EmbedderInfo(provider=settings.embedder.provider, model=settings.embedder.model, dimension=0)


def store_info(settings: Settings, store: Store | None = None) -> StoreInfo:
    if store is not None:
        return StoreInfo(kind=store.kind, location=store.location)
    return StoreInfo(kind="remote" if settings.qdrant.url else "edge", location="")


def build_status(
    root: Path | None,
    settings: Settings,
    idx: Indexer | None = None,
    *,
    settings_error: str | None = None,
    warnings: list[str] | None = None,
    watcher: Watcher | None = None,
) -> IndexStatus:
    """The index's counters (from the indexer, zeros before it runs) plus what only the caller
    knows: a settings problem, settings warnings and the watcher's health."""
    if idx is not None:
        st = idx.snapshot()
    else:
        st = IndexStatus(
            state="error" if settings_error else "indexing",
            phase="error" if settings_error else "starting",
            embedder=embedder_info(settings),
            store=store_info(settings),
        )
    return st.model_copy(
        update={
            "workspace": str(root or ""),
            "version": __version__,
            "message": st.message or settings_error or (watcher.problem if watcher else None),
            "warnings": list(warnings or []),
            "watching": watcher.watching if watcher else False,
        }
    )


def progress_message(st: IndexStatus) -> str:
    """The `n/N files` text of a running index (`$/progress` reports and `ragls index`)."""
    if not st.files_total:
        return "discovering files"
    if st.phase == "lexical":
        return f"{st.lexical.done + st.files_failed}/{st.files_total} files (lexical)"
    return f"{st.dense.done + st.files_failed}/{st.files_total} files"


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
