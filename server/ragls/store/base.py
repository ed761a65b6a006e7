"""The store contract: what the indexer and retrieval need from Qdrant, nothing more."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # numpy is imported when vectors exist, not at start-up
    import numpy as np

DENSE = "dense"
LEXICAL = "lexical"
PAYLOAD_INDEXES = ("path", "language", "symbol_names")


class StoreError(RuntimeError):
    """The store failed or is unavailable; the message is shown to the user."""


class StoreLocked(StoreError):
    """Another process holds the embedded store."""


class StoreCorrupt(StoreError):
    """The embedded store exists but cannot be loaded; it is moved aside and rebuilt."""


class StoreFull(StoreError):
    """Not enough free space to write safely; nothing was written. Retry when space returns."""

    def __init__(self, message: str, need: int = 0, where: str = "") -> None:
        super().__init__(message)
        self.need, self.where = need, where


@dataclass
class PointData:
    id: str
    sparse: tuple[Sequence[int], Sequence[float]]
    payload: dict[str, Any]
    dense: np.ndarray | None = None


@dataclass
class SearchRequest:
    dense: np.ndarray | None
    sparse: tuple[list[int], list[float]]
    limit: int
    candidates: int = 50
    paths: list[str] | None = None  # exact workspace-relative paths allowed
    languages: list[str] | None = None
    symbol_names: list[str] = field(default_factory=list)
    fusion: str = "rrf"
    weights: tuple[float, float, float] = (1.0, 1.0, 2.0)  # dense, lexical, symbol
    rrf_k: int = 60  # RRF: each list adds weight / (rrf_k + rank)


@dataclass
class StoredHit:
    id: str
    score: float
    payload: dict[str, Any]


class Store(Protocol):
    kind: str
    location: str

    def upsert(self, points: list[PointData]) -> None: ...
    def set_dense(self, vectors: dict[str, np.ndarray]) -> None: ...
    def delete(self, ids: list[str]) -> None: ...
    def vacuum(self) -> bool:
        """Make deleted points stop counting in the lexical statistics (IDF) if enough have
        accumulated; True if it did something. The indexer calls it when a batch is done."""
        ...

    def search(self, req: SearchRequest) -> list[StoredHit]: ...
    def retrieve(self, ids: list[str]) -> list[StoredHit]: ...
    def by_symbol(self, names: list[str], limit: int) -> list[StoredHit]:
        """Chunks whose `symbol_names` payload holds one of `names` (lowercased qualified names
        or dotted suffixes), in no particular order."""
        ...

    def all_ids(self) -> dict[str, tuple[str, bool]]:
        """id -> (path, has_dense), for reconciling with the manifest."""
        ...

    def count(self) -> int: ...
    def flush(self) -> None: ...
    def release_pages(self, force: bool = False) -> None:
        """Memory-mapped pages of the store that this process holds go back to the system
        (kept in the page cache, read again from there when needed); rate-limited unless
        `force`. The indexer calls it after each batch."""
        ...

    def close(self) -> None: ...
