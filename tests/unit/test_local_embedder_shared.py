"""One bundled model per process and configuration (a multi-root workspace runs one indexer per
folder; each used to load its own ONNX sessions)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ragls.config import EmbedderSettings
from ragls.embedding import make_embedder
from ragls.embedding.onnx_local import LocalOnnxEmbedder


def test_folders_with_the_same_settings_share_one_model() -> None:
    a = make_embedder(EmbedderSettings())
    b = make_embedder(EmbedderSettings())
    other = make_embedder(EmbedderSettings(max_tokens=128))
    assert a is b
    assert other is not a and isinstance(other, LocalOnnxEmbedder)


def test_the_shared_model_embeds_concurrent_batches_like_a_private_one() -> None:
    shared = make_embedder(EmbedderSettings())
    private = LocalOnnxEmbedder(EmbedderSettings())
    batches = [[f"def f{i}_{j}(x):\n    return x * {j}\n" for j in range(12)] for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(shared.embed_documents, batches))
    for batch, vectors in zip(batches, got, strict=True):
        assert np.allclose(vectors, private.embed_documents(batch), atol=1e-5)
