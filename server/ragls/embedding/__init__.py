"""Embedding: chunk text -> unit vectors. The bundled ONNX model by default; HTTP
providers (OpenAI-compatible, Ollama, Copilot) by configuration."""

from __future__ import annotations

import threading

from ragls.config import EmbedderSettings
from ragls.embedding.base import Embedder, EmbeddingError

__all__ = ["Embedder", "EmbeddingError", "local_identity", "make_embedder"]

# One bundled model per process and configuration: a multi-root workspace runs one indexer per
# folder, and each would otherwise load its own ONNX sessions (~145 MB). The sessions are safe
# to share: onnxruntime runs concurrent calls, queries have their own session and lock, and
# close() holds nothing. The first caller is an indexer thread, whose niceness the ONNX threads
# inherit, as they would without sharing.
_local: dict[tuple[int, int, int], Embedder] = {}
_local_lock = threading.Lock()


def local_identity(settings: EmbedderSettings) -> tuple[str, int] | None:
    """The bundled model's id and dimension, known without loading it; None for an HTTP
    provider, whose dimension may take a request to learn."""
    if settings.provider != "local":
        return None
    from ragls.embedding.bundled import DIMENSION, model_id

    return model_id(settings.max_tokens), DIMENSION


def model_identity(settings: EmbedderSettings) -> tuple[str, int]:
    """The model id and dimension that key an index: the bundled model's without loading it, an
    HTTP provider's from the provider."""
    identity = local_identity(settings)
    if identity is not None:
        return identity
    emb = make_embedder(settings)
    try:
        return emb.model_id, emb.dimension
    finally:
        emb.close()


def make_embedder(settings: EmbedderSettings) -> Embedder:
    if settings.provider == "local":
        from ragls.embedding.onnx_local import LocalOnnxEmbedder

        key = (settings.max_tokens, settings.threads, settings.batch_size, settings.device)
        with _local_lock:
            if key not in _local:
                _local[key] = LocalOnnxEmbedder(settings)
            return _local[key]
    from ragls.embedding.http import make_http_embedder

    return make_http_embedder(settings)
