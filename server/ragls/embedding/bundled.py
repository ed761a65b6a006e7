"""The bundled model's identity: its files, name and dimension. Kept apart from onnx_local so
that the index can be located without importing ONNX Runtime (a warm start opens the index
while the model loads, docs/history/performance-log.md)."""

from __future__ import annotations

from pathlib import Path

MODEL_DIR = Path(__file__).parent / "model"
# Part of the model id, which keys indexes, manifests and the embedding cache: a new name
# whenever the weights change, so vectors of two models are never mixed.
MODEL_NAME = "ragls-code-minilm-l6-v6"
DIMENSION = 384


def model_id() -> str:
    return f"{MODEL_NAME}-int8"
