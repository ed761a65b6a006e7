"""One query embedding per text at a time, shared by the folders of a multi-root request."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import numpy as np

from ragls.embedding import Embedder


class SharedQueryEmbedding:
    """A multi-root request searches every folder's index at once, each through its (usually
    shared) bundled model: the first thread embeds the query, the others wait for its vector
    instead of embedding the same text again. Nothing is kept once the vector is handed out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[tuple[str, int, str], Future[np.ndarray]] = {}

    def embed(self, embedder: Embedder, text: str) -> np.ndarray:
        if embedder.provider != "local":  # an HTTP model name does not say which server answers
            return embedder.embed_query(text)
        key = (embedder.model_id, embedder.dimension, text)
        with self._lock:
            running = self._running.get(key)
            if running is None:
                mine: Future[np.ndarray] = Future()
                self._running[key] = mine
        if running is not None:
            return running.result()
        try:
            vector = embedder.embed_query(text)
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        else:
            mine.set_result(vector)
            return vector
        finally:
            with self._lock:
                self._running.pop(key, None)


shared_query_embedding = SharedQueryEmbedding()
