"""The bundled model on the GPU (embedder.device = "cuda") against the same machine's CPU.

    python bench/gpu_embedder.py [--chunks 8192] [--json FILE]

Needs onnxruntime-gpu in place of onnxruntime (`make venv-gpu`) and a CUDA machine; anywhere
else the `cuda` embedder falls back to the CPU and the report says so (`device`, `warning`).
The texts are real code: 40-line windows of this repository's own source files, as many as
asked (cycled when the repository has fewer). Reports chunks/s of each path over the same
texts (after one warm-up call), and how far the GPU's vectors are from the CPU's (min cosine).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from ragls.config import EmbedderSettings  # noqa: E402
from ragls.embedding.onnx_local import LocalOnnxEmbedder  # noqa: E402

SUFFIXES = {".py", ".ts", ".java", ".kt", ".lua", ".js"}


def code_windows(n: int, lines: int = 40) -> list[str]:
    out: list[str] = []
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in SUFFIXES or any(p in {"node_modules", ".venv", "build", "out"} for p in path.parts):
            continue
        text = path.read_text("utf-8", errors="replace").splitlines()
        out += ["\n".join(text[i : i + lines]) for i in range(0, len(text), lines)]
    out = [t for t in out if t.strip()]
    return (out * (n // max(len(out), 1) + 1))[:n]


def rate(emb: LocalOnnxEmbedder, texts: list[str]) -> tuple[float, np.ndarray]:
    emb.embed_documents(texts[:256])  # warm-up: arena, kernels, CUDA context
    start = time.perf_counter()
    vecs = np.concatenate([emb.embed_documents(texts[i : i + 512]) for i in range(0, len(texts), 512)])
    return len(texts) / (time.perf_counter() - start), vecs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chunks", type=int, default=8192)
    p.add_argument("--cpu-chunks", type=int, default=1024, help="the CPU path is timed on the first N")
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    import onnxruntime as ort

    texts = code_windows(a.chunks)
    t0 = time.perf_counter()
    gpu = LocalOnnxEmbedder(EmbedderSettings(device="cuda"))
    report: dict[str, object] = {
        "onnxruntime": ort.__version__,
        "providers": ort.get_available_providers(),
        "device": gpu.device,
        "warning": gpu.device_warning,
        "open_s": round(time.perf_counter() - t0, 2),
        "chunks": len(texts),
        "cpu_threads": os.cpu_count(),
    }
    gpu_rate, gpu_vecs = rate(gpu, texts)
    cpu = LocalOnnxEmbedder(EmbedderSettings())
    cpu_rate, cpu_vecs = rate(cpu, texts[: a.cpu_chunks])
    report |= {
        "cuda_setting_chunks_per_s": round(gpu_rate, 1),
        "cpu_chunks_per_s": round(cpu_rate, 1),
        "speedup": round(gpu_rate / cpu_rate, 1),
        "min_cosine_vs_cpu": round(float((gpu_vecs[: len(cpu_vecs)] * cpu_vecs).sum(1).min()), 6),
    }
    print(json.dumps(report, indent=2))
    if a.json:
        a.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
