"""A query's frozen, read-only view of one folder's index: the store, limited to the chunks the
worker's last published records name. A batch writes its new points before it deletes the old
ones and publishes the records after both (index/apply.py), so without this a query asked in
between would see a file twice, old and new chunks together; through the view it sees the
version published last (or, for the moment between the delete and the publish, neither)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragls.store import Store
    from ragls.store.base import SearchRequest, StoredHit
    from ragls.store.manifest import FileRecord


class Records(Protocol):
    """What a view is made from: the worker's last `state.Published`."""

    @property
    def paths(self) -> tuple[str, ...]: ...

    @property
    def records(self) -> Mapping[str, FileRecord]: ...


class FrozenView:
    """The reads a question makes (`search`, `by_symbol`, `retrieve`), filtered to the chunk ids
    of `records`; every other attribute is the store's own."""

    def __init__(self, store: Store, records: Mapping[str, FileRecord]) -> None:
        self._store = store
        self._records = records
        self._ids: dict[str, frozenset[str]] = {}  # path -> its published chunk ids, as read

    def visible(self, hit: StoredHit) -> bool:
        path = hit.payload.get("path")
        if not isinstance(path, str):
            return False
        ids = self._ids.get(path)
        if ids is None:
            rec = self._records.get(path)
            ids = self._ids[path] = frozenset(rec.chunk_ids) if rec is not None else frozenset()
        return hit.id in ids

    def search(self, req: SearchRequest) -> list[StoredHit]:
        return [h for h in self._store.search(req) if self.visible(h)]

    def by_symbol(self, names: list[str], limit: int) -> list[StoredHit]:
        return [h for h in self._store.by_symbol(names, limit) if self.visible(h)]

    def retrieve(self, ids: list[str]) -> list[StoredHit]:
        return [h for h in self._store.retrieve(ids) if self.visible(h)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
