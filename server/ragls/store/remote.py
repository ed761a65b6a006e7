"""Qdrant server backend (qdrant-client): the same data model and contract as `EdgeStore`,
for teams and monorepos whose index outgrows one laptop.

`qdrant.url = ":memory:"` runs qdrant-client's in-process mode; tests use it to exercise this
backend without a server. It is slow (no indexes) and dies with the process."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ragls.config import Settings
from ragls.store.base import DENSE, LEXICAL, PAYLOAD_INDEXES, PointData, SearchRequest, StoredHit, StoreError
from ragls.system.identity import workspace_id

log = logging.getLogger(__name__)

MEMORY = ":memory:"
_SYMBOL_LIMIT = 10
_SCROLL_PAGE = 2048
_DELETE_BATCH = 1024
_RETRIES = 4
_BACKOFF_BASE_S = 0.5
_BACKOFF_CAP_S = 30.0

T = TypeVar("T")


def collection_name(root: Path, settings: Settings, model_id: str, dimension: int) -> str:
    """`{prefix}-{workspace_id}-{model}-{dim}`, limited to characters every Qdrant accepts."""
    raw = f"{settings.qdrant.collection_prefix}-{workspace_id(root)}-{model_id}-{dimension}"
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", raw).strip("-.")
    return name[:255]


def safe_url(url: str) -> str:
    """The URL without userinfo or query, fit for logs and status."""
    if url == MEMORY:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _is_transient(exc: BaseException) -> bool:
    """Worth retrying: connection trouble, timeouts, overload, 5xx."""
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code is not None and (exc.status_code == 429 or exc.status_code >= 500)
    if isinstance(exc, (ResponseHandlingException, httpx.TransportError, TimeoutError, ConnectionError)):
        return True
    try:  # grpc is optional at run time; only inspect its errors when it is importable
        import grpc

        if isinstance(exc, grpc.RpcError):
            code = exc.code() if hasattr(exc, "code") else None
            return code in (
                grpc.StatusCode.UNAVAILABLE,
                grpc.StatusCode.DEADLINE_EXCEEDED,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                grpc.StatusCode.ABORTED,
            )
    except ImportError:
        pass
    return False


def _describe(exc: BaseException) -> str:
    if isinstance(exc, UnexpectedResponse):
        body = exc.content.decode("utf-8", "replace")[:300] if exc.content else ""
        return f"HTTP {exc.status_code} {exc.reason_phrase}: {body}".strip()
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):  # grpc.RpcError: its str() is a multi-line dump
        try:
            return f"gRPC {code().name}: {details()}"[:300]
        except Exception:  # not a finished call after all
            pass
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


class RemoteStore:
    kind = "remote"

    def __init__(
        self,
        root: Path,
        settings: Settings,
        model_id: str,
        dimension: int,
        *,
        client: QdrantClient | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        q = settings.qdrant
        if not q.url and client is None:
            raise StoreError("qdrant.url is not set")
        self.dimension = dimension
        self.collection = collection_name(root, settings, model_id, dimension)
        self._url = q.url or MEMORY
        self.location = f"{safe_url(self._url)}/collections/{self.collection}"
        self._settings = q
        self._sleep = sleep
        self._rrf_weights = True  # cleared once if the server predates weighted RRF
        self._local = _is_local(client) if client is not None else self._url == MEMORY
        # qdrant-client's in-process mode is plain Python data structures: serialise access.
        # A real server handles concurrency itself, so no lock there.
        self._lock: threading.Lock | None = threading.Lock() if self._local else None
        self._owns_client = client is None
        self._client = client if client is not None else self._connect()
        self._ensure_collection()

    # -- setup -------------------------------------------------------------------------------
    def _connect(self) -> QdrantClient:
        q = self._settings
        if self._url == MEMORY:
            return QdrantClient(location=MEMORY)
        # The key is read here and handed to the client only; it is never stored on self or logged.
        api_key = os.environ.get(q.api_key_env) if q.api_key_env else None
        if api_key and urlsplit(self._url).scheme == "http":
            log.warning("sending the Qdrant API key over plain http to %s; use https", safe_url(self._url))
        try:
            with warnings.catch_warnings():
                # Warned about above, in our log; the client's version probe is skipped because
                # the collection check right after it tells the same, with a clearer message.
                warnings.simplefilter("ignore", UserWarning)
                return QdrantClient(
                    url=q.url,
                    api_key=api_key or None,
                    prefer_grpc=q.prefer_grpc,
                    timeout=max(1, round(q.timeout_s)),
                    check_compatibility=False,
                )
        except Exception as exc:  # invalid URL and the like
            raise StoreError(f"cannot connect to Qdrant at {safe_url(self._url)}: {_describe(exc)}") from exc

    def _ensure_collection(self) -> None:
        try:
            exists = self._call(lambda: self._client.collection_exists(self.collection), retries=1)
        except StoreError as exc:
            hint = (
                " (is the server running? with preferGrpc it must also listen on gRPC, port 6334)"
                if _is_transient(exc.__cause__ or exc)
                else ""
            )
            raise StoreError(f"Qdrant at {safe_url(self._url)} is unreachable: {exc}{hint}") from exc
        if exists:
            self._check_dimension()
        else:
            self._create_collection()
        if not self._local:  # in-process mode ignores payload indexes (and warns about them)
            for name in PAYLOAD_INDEXES:
                self._call(
                    lambda n=name: self._client.create_payload_index(  # type: ignore[misc]
                        self.collection, n, qm.PayloadSchemaType.KEYWORD, wait=True
                    )
                )

    def _create_collection(self) -> None:
        q = self._settings
        quant = None
        if q.quantization == "scalar":
            # int8 copies in RAM for search, originals rescored from disk/RAM: ~4x less memory.
            quant = qm.ScalarQuantization(
                scalar=qm.ScalarQuantizationConfig(type=qm.ScalarType.INT8, quantile=0.99, always_ram=True)
            )
        try:
            self._call(
                lambda: self._client.create_collection(
                    self.collection,
                    vectors_config={
                        DENSE: qm.VectorParams(
                            size=self.dimension, distance=qm.Distance.COSINE, on_disk=q.on_disk or None
                        )
                    },
                    sparse_vectors_config={LEXICAL: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
                    shard_number=q.shard_number,
                    replication_factor=q.replication_factor,
                    quantization_config=quant,
                )
            )
            log.info("created Qdrant collection %s", self.collection)
        except StoreError:
            # Two ragls processes may race to create it; the loser finds it there.
            if not self._call(lambda: self._client.collection_exists(self.collection)):
                raise

    def _check_dimension(self) -> None:
        info = self._call(lambda: self._client.get_collection(self.collection))
        vectors = info.config.params.vectors
        params = vectors.get(DENSE) if isinstance(vectors, dict) else None
        if params is None or params.size != self.dimension:
            found = params.size if params is not None else "no 'dense' vector"
            raise StoreError(f"collection {self.collection} exists with dimension {found}, expected {self.dimension}")

    # -- plumbing ----------------------------------------------------------------------------
    def _call(self, fn: Callable[[], T], retries: int = _RETRIES) -> T:
        """Run one client call, retrying transient failures with capped exponential backoff.
        Every write here is idempotent (upsert/delete by id), so a retry is always safe."""
        attempt = 0
        while True:
            try:
                if self._lock is None:
                    return fn()
                with self._lock:
                    return fn()
            except Exception as exc:
                if isinstance(exc, StoreError):
                    raise
                if attempt >= retries or not _is_transient(exc):
                    raise StoreError(f"Qdrant request failed: {_describe(exc)}") from exc
                delay = min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2**attempt) * (1 + 0.1 * random.random())
                log.warning(
                    "Qdrant request failed (%s); retry %d/%d in %.1fs", _describe(exc), attempt + 1, retries, delay
                )
                self._sleep(delay)
                attempt += 1

    # -- writes ------------------------------------------------------------------------------
    def upsert(self, points: list[PointData]) -> None:
        if not points:
            return
        structs = [qm.PointStruct(id=p.id, vector=_vectors(p), payload=p.payload) for p in points]
        step = self._settings.batch_size
        for i in range(0, len(structs), step):
            part = structs[i : i + step]
            self._call(lambda part=part: self._client.upsert(self.collection, part, wait=True))  # type: ignore[misc]

    def set_dense(self, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        pv = [
            qm.PointVectors(id=i, vector={DENSE: np.asarray(v, dtype=np.float32).tolist()}) for i, v in vectors.items()
        ]
        step = self._settings.batch_size
        for i in range(0, len(pv), step):
            part = pv[i : i + step]
            self._call(lambda part=part: self._client.update_vectors(self.collection, part, wait=True))  # type: ignore[misc]

    def delete(self, ids: list[str]) -> None:
        if not ids:
            return
        for i in range(0, len(ids), _DELETE_BATCH):
            sel = qm.PointIdsList(points=list(ids[i : i + _DELETE_BATCH]))
            self._call(lambda sel=sel: self._client.delete(self.collection, sel, wait=True))  # type: ignore[misc]

    def vacuum(self) -> bool:
        """Nothing to do: the server's own optimizer drops deleted points (see EdgeStore.vacuum)."""
        return False

    # -- reads -------------------------------------------------------------------------------
    def _filter(self, req: SearchRequest) -> list[qm.Condition]:
        must: list[qm.Condition] = []
        if req.paths is not None:
            must.append(qm.FieldCondition(key="path", match=qm.MatchAny(any=list(req.paths))))
        if req.languages is not None:
            must.append(qm.FieldCondition(key="language", match=qm.MatchAny(any=list(req.languages))))
        return must

    def _prefetches(self, req: SearchRequest, must: list[qm.Condition]) -> tuple[list[qm.Prefetch], list[float]]:
        flt = qm.Filter(must=must) if must else None
        prefetch: list[qm.Prefetch] = []
        weights: list[float] = []
        if req.dense is not None:
            prefetch.append(
                qm.Prefetch(
                    query=np.asarray(req.dense, dtype=np.float32).tolist(),
                    using=DENSE,
                    limit=req.candidates,
                    filter=flt,
                )
            )
            weights.append(req.weights[0])
        if req.sparse[0]:
            sv = qm.SparseVector(indices=list(req.sparse[0]), values=list(req.sparse[1]))
            prefetch.append(qm.Prefetch(query=sv, using=LEXICAL, limit=req.candidates, filter=flt))
            weights.append(req.weights[1])
        if req.symbol_names and prefetch:
            # Named definitions, ranked by the same query as the last list (lexical if present).
            last = prefetch[-1]
            sym = qm.FieldCondition(key="symbol_names", match=qm.MatchAny(any=list(req.symbol_names)))
            prefetch.append(
                qm.Prefetch(
                    query=last.query, using=last.using, limit=_SYMBOL_LIMIT, filter=qm.Filter(must=[sym, *must])
                )
            )
            weights.append(req.weights[2])
        return prefetch, weights

    def _fusion(self, req: SearchRequest, weights: list[float]) -> qm.Query:
        if req.fusion == "dbsf":
            return qm.FusionQuery(fusion=qm.Fusion.DBSF)
        if self._rrf_weights:
            return qm.RrfQuery(rrf=qm.Rrf(k=req.rrf_k, weights=weights))
        return qm.FusionQuery(fusion=qm.Fusion.RRF)

    def search(self, req: SearchRequest) -> list[StoredHit]:
        if req.paths == [] or req.languages == []:
            return []  # an empty allow-list matches nothing
        must = self._filter(req)
        prefetch, weights = self._prefetches(req, must)
        if not prefetch:
            return []
        flt = qm.Filter(must=must) if must else None

        def run() -> qm.QueryResponse:
            return self._client.query_points(
                self.collection,
                prefetch=prefetch,
                query=self._fusion(req, weights),
                query_filter=flt,
                limit=req.limit,
                with_payload=True,
            )

        try:
            res = self._call(run)
        except StoreError as exc:
            cause = exc.__cause__
            if not (self._rrf_weights and req.fusion != "dbsf" and _rejects_rrf_params(cause)):
                raise
            # Servers before weighted RRF reject the `rrf` query: fall back to plain RRF for good.
            log.warning("Qdrant server does not support weighted RRF; using plain RRF")
            self._rrf_weights = False
            res = self._call(run)
        return [StoredHit(str(p.id), float(p.score), dict(p.payload or {})) for p in res.points]

    def retrieve(self, ids: list[str]) -> list[StoredHit]:
        out: list[StoredHit] = []
        for i in range(0, len(ids), _DELETE_BATCH):
            part = list(ids[i : i + _DELETE_BATCH])
            recs = self._call(
                lambda part=part: self._client.retrieve(  # type: ignore[misc]
                    self.collection, part, with_payload=True, with_vectors=False
                )
            )
            out.extend(StoredHit(str(r.id), 0.0, dict(r.payload or {})) for r in recs)
        return out

    def by_symbol(self, names: list[str], limit: int) -> list[StoredHit]:
        flt = qm.Filter(must=[qm.FieldCondition(key="symbol_names", match=qm.MatchAny(any=names))])
        recs, _ = self._call(
            lambda: self._client.scroll(
                self.collection, scroll_filter=flt, limit=limit, with_payload=True, with_vectors=False
            )
        )
        return [StoredHit(str(r.id), 0.0, dict(r.payload or {})) for r in recs]

    def all_ids(self) -> dict[str, tuple[str, bool]]:
        out: dict[str, tuple[str, bool]] = {}
        offset: Any = None
        while True:
            recs, offset = self._call(
                lambda off=offset: self._client.scroll(  # type: ignore[misc]
                    self.collection, limit=_SCROLL_PAGE, offset=off, with_payload=["path"], with_vectors=[DENSE]
                )
            )
            for r in recs:
                vec = r.vector
                has_dense = isinstance(vec, dict) and vec.get(DENSE) is not None
                out[str(r.id)] = (str((r.payload or {}).get("path", "")), has_dense)
            if offset is None:
                return out

    def count(self) -> int:
        return int(self._call(lambda: self._client.count(self.collection, exact=True)).count)

    def flush(self) -> None:
        pass  # every write above waits for the server to apply it

    def release_pages(self, force: bool = False) -> None:
        pass  # the server keeps its own pages

    def drop(self) -> None:
        """Delete the whole collection (migrate --replace)."""
        self._call(lambda: self._client.delete_collection(self.collection))

    def close(self) -> None:
        if self._owns_client:
            with contextlib.suppress(Exception):  # closing a client whose server went away is harmless
                self._client.close()


def _is_local(client: QdrantClient) -> bool:
    # qdrant-client exposes no public flag; its in-process backend class is QdrantLocal.
    return type(getattr(client, "_client", None)).__name__ == "QdrantLocal"


def _rejects_rrf_params(exc: BaseException | None) -> bool:
    """An old server's answer to the `rrf` query variant: a 400/422 (or gRPC invalid argument)
    that mentions rrf. Other bad requests must surface, not silently change the ranking."""
    if exc is None or "rrf" not in _describe(exc).lower():
        return False
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code in (400, 422)
    try:
        import grpc

        return isinstance(exc, grpc.RpcError) and exc.code() in (
            grpc.StatusCode.INVALID_ARGUMENT,
            grpc.StatusCode.UNIMPLEMENTED,
        )
    except ImportError:
        return False


def _vectors(p: PointData) -> dict[str, Any]:
    vec: dict[str, Any] = {LEXICAL: qm.SparseVector(indices=list(p.sparse[0]), values=list(p.sparse[1]))}
    if p.dense is not None:
        vec[DENSE] = np.asarray(p.dense, dtype=np.float32).tolist()
    return vec
