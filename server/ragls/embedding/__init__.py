"""Embedding: chunk text -> unit vectors. The bundled ONNX model by default; HTTP
providers (OpenAI-compatible, Ollama, Copilot) by configuration."""

from __future__ import annotations

from ragls.config import EmbedderSettings
from ragls.embedding.base import Embedder, EmbeddingError

__all__ = ["Embedder", "EmbeddingError", "make_embedder"]


def make_embedder(settings: EmbedderSettings) -> Embedder:
    if settings.provider == "local":
        from ragls.embedding.onnx_local import LocalOnnxEmbedder

        return LocalOnnxEmbedder(settings)
    from ragls.embedding.http import make_http_embedder

    return make_http_embedder(settings)
