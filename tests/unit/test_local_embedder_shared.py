"""One bundled model per process and configuration (a multi-root workspace runs one indexer per
folder; each used to load its own ONNX sessions)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ragls.config import EmbedderSettings
from ragls.embedding import make_embedder, model_identity
from ragls.embedding.bundled import DEFAULT_MAX_TOKENS, DIMENSION, model_id
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


def test_the_truncation_length_is_part_of_the_model_identity() -> None:
    # A chunk cut at 128 tokens and the same chunk cut at 256 have different vectors: another
    # maxTokens must key its own index and cache rows, and the default keeps the id that
    # existing caches and snapshots were written under.
    default, short = EmbedderSettings(), EmbedderSettings(max_tokens=128)
    assert default.max_tokens == DEFAULT_MAX_TOKENS
    assert model_identity(default) == (model_id(), DIMENSION) == (make_embedder(default).model_id, DIMENSION)
    assert model_identity(short)[0] == make_embedder(short).model_id != model_id()
