"""A `rag/retrieve` answer from an open index, shared by the LSP handler and `ragls search`:
"no retrieval" sets `error` (empty context), "degraded" keeps the results and adds `warnings`
(docs/protocol.md)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.config import RetrievalSettings
from ragls.embedding import EmbeddingError
from ragls.protocol import RetrieveResultOut
from ragls.retrieval import retrieve, retrieve_result

if TYPE_CHECKING:
    from ragls.indexer import Indexer

log = logging.getLogger(__name__)


def failed(error: str) -> RetrieveResultOut:
    return RetrieveResultOut(context="", chunks=[], took_ms=0.0, error=error)


def answer(
    idx: Indexer,
    settings: RetrievalSettings,
    root: Path,
    query: str,
    top_k: int,
    max_chars: int,
    allowed: list[str] | None = None,
    languages: list[str] | None = None,
) -> RetrieveResultOut:
    """Blocking (run it off the event loop). Never raises for a store or provider failure."""
    if idx.store is None or idx.fatal:
        return failed(idx.fatal or "index is not available")
    warnings: list[str] = []
    if idx.breaker.is_open:
        # The provider is known to be down: do not make the user wait for its timeouts.
        settings = settings.model_copy(update={"mode": "lexical"})
        warnings.append(f"dense search paused, the embedding provider is down ({idx.breaker.last_error}); lexical only")
    try:
        try:
            res = retrieve(idx.store, idx.embedder, settings, query, top_k, max_chars, allowed, languages)
        except EmbeddingError as exc:
            # The embedding provider is down: lexical search still answers, and says so.
            log.warning("query embedding failed, answering from lexical search only: %s", exc)
            lexical = settings.model_copy(update={"mode": "lexical"})
            res = retrieve(idx.store, idx.embedder, lexical, query, top_k, max_chars, allowed, languages)
            warnings.append(f"dense search unavailable ({exc}); results are lexical only")
    except Exception as exc:  # the store can fail (remote down); chat must keep working
        log.error("retrieve failed: %s", exc)
        return failed(f"retrieval failed: {exc}")
    return retrieve_result(res, root, warnings)
