"""The dense backfill: chunks stored with their sparse vector only get their dense vector here,
a window at a time (open files first, then the most recently modified), from the embedding
cache when it has them, else from the embedder, with the chunks' name vectors cached beside
(ragls.index.name_rerank). Between embedding calls it gives way to queued changes.

Vectors an imported snapshot holds (embedding/cache.py) are taken here only, and only once a
random sample of the window's agrees with the model (`_from_snapshots`): a snapshot caught lying
is distrusted whole, the window's chunks are embedded, and every file of this index that took
its vectors before is embedded again (`requeue`)."""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ragls.chunking.model import embedding_text, name_text
from ragls.embedding import Embedder, EmbeddingError
from ragls.embedding.cache import AGREE, SnapshotVector, cosine
from ragls.index import name_rerank
from ragls.index.handle import IndexHandle
from ragls.index.state import IndexState, Phase, now
from ragls.store.manifest import DENSE, LEXICAL

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

Item = tuple[str, str, dict[str, Any]]  # a chunk of the window: (path, point id, payload)

_DENSE_WINDOW = 512  # chunks the embedder groups by length together, to waste little padding
# Of the chunks a window would take from snapshots, the model embeds a random sample and compares:
# 1 in 64, at least 4 (a full window: 8), and every one of the first 64 an index takes in a run
# (a small repository is checked whole). A snapshot that lies about a share p of the chunks an
# index takes from it is caught with probability 1 - (1 - 1/64)^(p x chunks) or better: certain
# for a wholesale liar, 79 % for 100 lies among any number of chunks; a single targeted lie
# among 10,000 chunks gets through with 98 %. The cost is 1/64 of a cold index's embedding plus
# 64 chunks (150,000 chunks: ~2,400 embedded, half a minute on 2 cores instead of half an
# hour); a sampled chunk's model vector is kept, so nothing is embedded twice.
_SAMPLE_SHARE = 64
_SAMPLE_MIN = 4
_CHECK_FIRST = 64
_RANDOM = random.SystemRandom()  # which chunks are checked must not be predictable from the file


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
        self._check_first = _CHECK_FIRST  # snapshot vectors of this run still checked every one

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
        h.await_snapshot()  # its vectors go into the cache before any lookup
        self.requeue(h.distrusted_files())  # a snapshot distrusted since this index took from it
        window: list[tuple[str, str]] = []  # (path, id)
        for path in self.order():
            window.extend((path, i) for i in st.missing_dense[path])
            if len(window) >= _DENSE_WINDOW:
                break
        hits = {hit.id: hit.payload for hit in h.store.retrieve([i for _, i in window])}
        items = [(p, i, hits[i]) for p, i in window if i in hits]
        # Vectors already in the embedding cache are stored without embedding: after a clean
        # warm start every chunk of a lexical file is queued without reading the store.
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
        with_names = name_rerank.usable(emb, h.cache)
        left = self._from_snapshots(items, emb, with_names)
        if left is None:
            return  # the sample's embedding failed: a fault, retried
        items = left
        window_texts = [_text(pl) for _, _, pl in items]
        # The embedder groups the whole window (the local model: by token length, each group
        # one full ONNX call); slicing it by a fixed count first left calls 11 % emptier.
        for group in emb.batches(window_texts):
            part = [items[k] for k in group]
            if not self._embed(emb, part, [window_texts[k] for k in group], with_names):
                return
            h.release_memory()  # this call's buffers (ONNX Runtime, numpy) are freed, its vectors written
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
                        # An empty hash forces a re-chunk; the vanished chunks count as new.
                        st.records.set_chunk_ids(p, [i for i in rec.chunk_ids if i not in ids], "")
                    if rest:
                        st.missing_dense[p] = rest
                    st.pending.add(p)
        if not st.missing_dense:
            st.phase = Phase.IDLE
            st.last_indexed_at = now()
            h.flush()  # the index is complete: nothing left for a restart to replay

    def _embed(
        self, emb: Embedder, part: list[tuple[str, str, dict[str, Any]]], texts: list[str], with_names: bool
    ) -> bool:
        """Embed `part` (one call), cache and store its vectors; False when the call failed (the
        files stay queued, tried last)."""
        got = self._vectors(emb, part, texts, with_names)
        if got is not None:
            self._store_embedded(part, *got)
        return got is not None

    def _vectors(
        self, emb: Embedder, part: list[tuple[str, str, dict[str, Any]]], texts: list[str], with_names: bool
    ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """The model's vectors (and name vectors) of `part`, not stored yet; None when the call
        failed."""
        name_vecs = None
        try:
            if with_names:  # the name vectors come from the same forward pass (name_rerank)
                vecs, name_vecs = emb.embed_with_names(  # type: ignore[attr-defined]
                    texts, [name_text(pl.get("symbol"), pl.get("text", "")) for _, _, pl in part]
                )
            else:
                vecs = emb.embed_documents(texts)
            if vecs.shape != (len(texts), emb.dimension):
                raise EmbeddingError(f"embedder returned shape {vecs.shape}, expected ({len(texts)}, {emb.dimension})")
        except Exception as exc:
            self._failed(sorted({p for p, _, _ in part}), exc)
            return None
        if self.handle.breaker.record_success():
            log.info("embedding provider is back; dense indexing resumes")
        self.state.embeds += len(texts)
        log.debug("embedded %d chunks", len(texts))
        return vecs, name_vecs

    def _store_embedded(
        self, part: list[tuple[str, str, dict[str, Any]]], vecs: np.ndarray, name_vecs: np.ndarray | None
    ) -> None:
        # Name vectors first: once _store marks a file dense the status may say `ready`, and a
        # query then looks the file's name vectors up.
        if name_vecs is not None:
            self._cache_names(part, name_vecs)
        self._store(part, list(vecs), cache=True)

    def _from_snapshots(self, items: list[Item], emb: Embedder, with_names: bool) -> list[Item] | None:
        """The chunks of `items` that trusted snapshots hold vectors for take them, once a random
        sample of them agrees with the model (`_check`); a snapshot that disagrees is distrusted
        whole. Returns the chunks still to embed; None if the sample's embedding failed."""
        h = self.handle
        found, names = h.snapshot_vectors([pl["text_hash"] for _, _, pl in items if "text_hash" in pl])
        if not found:
            return items
        offered = [t for t in items if t[2].get("text_hash") in found]
        rest = [t for t in items if t[2].get("text_hash") not in found]
        k = min(len(offered), max(_SAMPLE_MIN, math.ceil(len(offered) / _SAMPLE_SHARE), self._check_first))
        self._check_first = max(0, self._check_first - k)
        picked = set(_RANDOM.sample(range(len(offered)), k))
        liars = self._check([t for i, t in enumerate(offered) if i in picked], found, names, emb, with_names)
        if liars is None:
            return None
        unchecked = [t for i, t in enumerate(offered) if i not in picked]
        rest += [t for t in unchecked if found[t[2]["text_hash"]].snapshot in liars]
        if liars:
            self.requeue(h.distrusted_files())  # what this index took from them before
        self._take([t for t in unchecked if found[t[2]["text_hash"]].snapshot not in liars], found)
        return rest

    def _check(
        self,
        sample: list[Item],
        found: dict[str, SnapshotVector],
        names: dict[str, np.ndarray],
        emb: Embedder,
        with_names: bool,
    ) -> set[int] | None:
        """Embed the sample, compare with the snapshots' vectors (and name vectors), distrust
        each snapshot with one below AGREE, then store the sample's model vectors as any embedded
        chunk's. Returns the snapshots distrusted; None if the embedding failed."""
        got = self._vectors(emb, sample, [_text(pl) for _, _, pl in sample], with_names)
        if got is None:
            return None
        vecs, name_vecs = got
        lowest: dict[int, float] = {}
        for j, (_, _, pl) in enumerate(sample):
            held = found[pl["text_hash"]]
            agree = cosine(vecs[j], held.vector)
            if name_vecs is not None and pl["text_hash"] in names:
                agree = min(agree, cosine(name_vecs[j], names[pl["text_hash"]]))
            lowest[held.snapshot] = min(agree, lowest.get(held.snapshot, 1.0))
        liars = {s for s, agree in lowest.items() if agree < AGREE}
        for s in liars:
            why = f"the model checked a sample of its vectors and one differs (cosine {lowest[s]:.2f} < {AGREE})"
            self.handle.distrust_snapshot(s, why)
        # Stored after the verdict: storing a computed vector also compares it with the snapshot
        # row it replaces (cache.put_many), which would report the same lie a second time.
        self._store_embedded(sample, vecs, name_vecs)
        return liars

    def _take(self, kept: list[Item], found: dict[str, SnapshotVector]) -> None:
        """Store snapshot vectors, after recording which files took them from which snapshot."""
        if not kept:
            return
        uses: dict[int, set[str]] = {}
        taken: dict[int, int] = {}
        for p, _, pl in kept:
            snapshot = found[pl["text_hash"]].snapshot
            uses.setdefault(snapshot, set()).add(p)
            taken[snapshot] = taken.get(snapshot, 0) + 1
        self.handle.took_snapshot_vectors(uses, taken)
        self._store(kept, [found[pl["text_hash"]].vector for _, _, pl in kept], cache=False)

    def requeue(self, paths: set[str]) -> None:
        """Files whose vectors came from a snapshot distrusted since: every chunk goes back to the
        dense pass, where those the model computed come from the cache and the rest are embedded
        (the distrusted snapshot's rows are gone)."""
        st, h = self.state, self.handle
        if not paths:
            return
        assert h.manifest is not None
        lexical: list[str] = []
        with st.lock:
            for p in paths:
                rec = st.records.get(p)
                if rec is None or not rec.chunk_ids:
                    continue
                st.missing_dense[p] = list(rec.chunk_ids)
                if rec.status == DENSE:
                    st.records.set_status(p, LEXICAL)
                    lexical.append(p)
        h.manifest.set_status(lexical, LEXICAL)
        log.warning("%d files took vectors from a distrusted snapshot; embedding them again", len(paths))

    def _cache_names(self, part: list[tuple[str, str, dict[str, Any]]], vecs: np.ndarray) -> None:
        """The chunks' name vectors into the embedding cache, where queries look them up
        (ragls.index.name_rerank); not into the index."""
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


def _text(pl: dict[str, Any]) -> str:
    """What the model embeds for a chunk's payload."""
    return embedding_text(pl.get("path", ""), pl.get("symbol"), pl.get("signature"), pl.get("text", ""))
