"""The embedder contract shared by the bundled model and the HTTP providers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # numpy is imported when vectors exist, not at start-up
    import numpy as np


class EmbeddingError(RuntimeError):
    """An embedding call failed after its retries; the caller marks the files failed."""


class Embedder(Protocol):
    provider: str
    model_id: str
    dimension: int

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised float32 matrix, one row per text."""
        ...

    def batches(self, texts: list[str]) -> list[list[int]]:
        """Indices of `texts` in the groups one call of `embed_documents` would embed together
        (the indexer embeds group by group, checking for other work in between)."""
        ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def close(self) -> None: ...
