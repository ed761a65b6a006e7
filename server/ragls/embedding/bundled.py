"""The bundled model's identity: its files, name and dimension. Kept apart from onnx_local so
that the index can be located without importing ONNX Runtime (a warm start opens the index
while the model loads, and the import delayed that by 46 ms)."""

from __future__ import annotations

from pathlib import Path

MODEL_DIR = Path(__file__).parent / "model"
# Part of the model id, which keys indexes, manifests and the embedding cache: a new name
# whenever the weights change, so vectors of two models are never mixed.
MODEL_NAME = "ragls-code-minilm-l6-v6"
DIMENSION = 384


# EmbedderSettings.max_tokens's default (a test keeps the two equal): the vectors every existing
# cache and snapshot holds, so that id keeps no suffix.
DEFAULT_MAX_TOKENS = 256


def model_id(max_tokens: int = DEFAULT_MAX_TOKENS) -> str:
    """The truncation length is part of what a vector means: a chunk cut at 256 tokens and the
    same chunk cut at 512 get different vectors, so another `embedder.maxTokens` keys its own
    index and cache rows instead of mixing with (or reusing) the default's."""
    suffix = "" if max_tokens == DEFAULT_MAX_TOKENS else f"-t{max_tokens}"
    return f"{MODEL_NAME}-int8{suffix}"
