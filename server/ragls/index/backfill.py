"""The dense backfill: chunks stored with their sparse vector only get their dense vector here,
a window at a time (open files first, then the most recently modified), from the embedding
cache when it has them, else from the embedder, with the chunks' name vectors cached beside
(ragls.name_rerank). Between embedding calls it gives way to queued changes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ragls import memory, name_rerank
from ragls.chunking.model import embedding_text, name_text
from ragls.embedding import EmbeddingError
from ragls.index.handle import IndexHandle
from ragls.index.state import IndexState, Phase, now
from ragls.store.manifest import DENSE

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

_DENSE_WINDOW = 512  # chunks the embedder groups by length together, to waste little padding


class Backfill:
    def __init__(
        self,
        state: IndexState,
        handle: IndexHandle,
        interrupted: Callable[[], bool],
        on_change: Callable[[], None],
        on_recovered: Callable[[], None],
    ) -> None:
        self.state = state
        self.handle = handle
        self._interrupted = interrupted  # jobs are waiting, or the worker stops: give way
        self._on_change = on_change
        # A window is up to 512 chunks (seconds of embedding, a minute on a loaded machine): the
        # fault that stopped the last write ends with the first group stored, not the window.
        self._on_recovered = on_recovered

    def order(self) -> list[str]:
        st = self.state
        with st.lock:
            paths = list(st.missing_dense)
            opened = set(st.open_docs)
            failed_at = dict(st.dense_fail_at)
        # Open files first, files whose last try failed last (so one bad file cannot block the
        # rest), then the most recently modified.
        return sorted(
            paths,
            key=lambda p: (
                p not in opened,
                failed_at.get(p, 0.0),
                -(st.records[p].mtime_ns if p in st.records else 0),
            ),
        )

    def step(self) -> None:
        """One window of chunks: cached vectors stored, the rest embedded group by group."""
        st, h = self.state, self.handle
        assert h.store is not None and h.manifest is not None and h.cache is not None
        h.check_dir()
        st.phase = Phase.DENSE
        window: list[tuple[str, str]] = []  # (path, id)
        for path in self.order():
            window.extend((path, i) for i in st.missing_dense[path])
            if len(window) >= _DENSE_WINDOW:
                break
        hits = {hit.id: hit.payload for hit in h.store.retrieve([i for _, i in window])}
        items = [(p, i, hits[i]) for p, i in window if i in hits]
        # Vectors already in the embedding cache are stored without embedding: after a clean
        # warm start every chunk of a lexical file is queued without reading the store.
        h.await_snapshot()  # its vectors go into the cache before any lookup
        cached = h.cached_vectors([pl["text_hash"] for _, _, pl in items if "text_hash" in pl])
        if cached:
            self._store(
                [t for t in items if t[2].get("text_hash") in cached],
                [cached[pl["text_hash"]] for _, _, pl in items if pl.get("text_hash") in cached],
                cache=False,
            )
            items = [t for t in items if t[2].get("text_hash") not in cached]
            if self._interrupted():
                return
        emb = h.model()
        window_texts = [
            embedding_text(pl.get("path", ""), pl.get("symbol"), pl.get("signature"), pl.get("text", ""))
            for _, _, pl in items
        ]
        with_names = name_rerank.usable(emb, h.cache)
        # The embedder groups the whole window (the local model: by token length, each group
        # one full ONNX call); slicing it by a fixed count first left calls 11 % emptier.
        for group in emb.batches(window_texts):
            part = [items[k] for k in group]
            texts = [window_texts[k] for k in group]
            name_vecs = None
            try:
                if with_names:  # the name vectors come from the same forward pass (name_rerank)
                    vecs, name_vecs = emb.embed_with_names(  # type: ignore[attr-defined]
                        texts, [name_text(pl.get("symbol"), pl.get("text", "")) for _, _, pl in part]
                    )
                else:
                    vecs = emb.embed_documents(texts)
                if vecs.shape != (len(texts), emb.dimension):
                    raise EmbeddingError(
                        f"embedder returned shape {vecs.shape}, expected ({len(texts)}, {emb.dimension})"
                    )
            except Exception as exc:
                self._failed(sorted({p for p, _, _ in part}), exc)
                return
            if h.breaker.record_success():
                log.info("embedding provider is back; dense indexing resumes")
            st.embeds += len(texts)
            log.debug("embedded %d chunks", len(texts))
            # Name vectors first: once _store marks a file dense the status may say `ready`, and
            # a query then looks the file's name vectors up.
            if name_vecs is not None:
                self._cache_names(part, name_vecs)
            self._store(part, list(vecs), cache=True)
            memory.trim()  # this call's buffers (ONNX Runtime, numpy, the store's) are freed now
            if self._interrupted():
                return  # let queued changes go first; the backfill resumes after
        # Ids that vanished from the store between steps: rewrite those chunks from the file
        # (dropping them would leave the record lexical forever and the counts off).
        vanished: dict[str, set[str]] = {}
        for p, i in window:
            if i not in hits and i in st.missing_dense.get(p, []):
                vanished.setdefault(p, set()).add(i)
        if vanished:
            with st.lock:
                for p, ids in vanished.items():
                    rest = [i for i in st.missing_dense.pop(p, []) if i not in ids]
                    if p in st.records:
                        rec = st.records[p]
                        st.records.set_chunk_ids(p, [i for i in rec.chunk_ids if i not in ids])
                        rec.hash = ""  # forces a re-chunk; the vanished chunks count as new
                    if rest:
                        st.missing_dense[p] = rest
                    st.pending.add(p)
        if not st.missing_dense:
            st.phase = Phase.IDLE
            st.last_indexed_at = now()
            h.flush()  # the index is complete: nothing left for a restart to replay

    def _cache_names(self, part: list[tuple[str, str, dict[str, Any]]], vecs: np.ndarray) -> None:
        """The chunks' name vectors into the embedding cache, where queries look them up
        (ragls.name_rerank); not into the index."""
        assert self.handle.cache is not None
        self.handle.cache.put_many(
            {name_rerank.NAME_KEY + pl["text_hash"]: vecs[k] for k, (_, _, pl) in enumerate(part) if "text_hash" in pl}
        )
        self.state.embeds_names += len(part)

    def _store(self, part: list[tuple[str, str, dict[str, Any]]], vecs: list[np.ndarray], cache: bool) -> None:
        """Store the dense vectors of `part` (path, id, payload) and mark finished files dense."""
        st, h = self.state, self.handle
        assert h.store is not None and h.manifest is not None and h.cache is not None
        # The window was read before embedding: a change handled since may have removed ids.
        live = {i for p, i, _ in part if i in st.missing_dense.get(p, [])}
        vec_by_id = {i: vecs[k] for k, (_, i, _) in enumerate(part) if i in live}
        if cache:
            h.cache.put_many({pl["text_hash"]: vecs[k] for k, (_, i, pl) in enumerate(part) if i in live})
        h.store.set_dense(vec_by_id)
        h.wrote(len(vec_by_id))
        if st.fault is not None:
            self._on_recovered()
        done_paths: list[str] = []
        with st.lock:
            for p, i, _ in part:
                rest = st.missing_dense.get(p)
                if rest is None:
                    continue
                if i in rest:
                    rest.remove(i)
                if not rest:
                    del st.missing_dense[p]
                    st.failed.pop(p, None)
                    st.dense_fail_at.pop(p, None)
                    if p in st.records:
                        st.records.set_status(p, DENSE)
                        done_paths.append(p)
        h.manifest.set_status(done_paths, DENSE)
        h.maybe_flush()
        self._on_change()

    def _failed(self, paths: list[str], exc: Exception) -> None:
        """An embedding call failed: the breaker counts it; the files stay queued, tried last."""
        st, breaker = self.state, self.handle.breaker
        was_open = breaker.is_open
        now_open = breaker.record_failure(str(exc))
        if not was_open:
            for p in paths:
                st.error(p, f"embedding failed: {exc}")
        at = time.monotonic()
        with st.lock:
            for p in paths:
                st.dense_fail_at[p] = at
                if now_open:
                    # Counted as failed while the provider is down (their lexical chunks stay
                    # searchable); they stay queued, so the probe and the recovery pick them up.
                    st.failed[p] = f"embedding failed: {exc}"
        if now_open and not was_open:
            log.warning("%s", breaker.describe())
