"""Raw embedder throughput: the bundled ONNX model alone, no server, no store.

    python -m bench.rawembed TEXTS.json [--nice N] [--repeat R]

Runs in its own process so that it can take the same niceness as the server's indexing
thread (settings.indexing.nice, 5 by default) and so its memory never mixes with the
benchmark's. Prints one JSON object: chunks/s of each repeat and their median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("texts", type=Path)
    ap.add_argument("--nice", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args(argv)
    if a.nice:
        os.nice(a.nice)  # before the ONNX session exists, so its threads inherit it
    from ragls.config import EmbedderSettings
    from ragls.embedding.onnx_local import LocalOnnxEmbedder

    texts: list[str] = json.loads(a.texts.read_text("utf-8"))
    emb = LocalOnnxEmbedder(EmbedderSettings())  # the server's defaults: batch 32, 256 tokens, all cores
    emb.embed_documents(texts[:32])  # warm-up: first-run allocations are not the model's speed
    rates = []
    cpu = []
    for _ in range(a.repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        emb.embed_documents(texts)
        dt = time.perf_counter() - t0
        rates.append(len(texts) / dt)
        cpu.append(time.process_time() - c0)
    tokens = sum(len(e.ids) for e in emb._tok.encode_batch(texts))
    print(
        json.dumps(
            {
                "chunks": len(texts),
                "tokens_mean": round(tokens / len(texts), 1),
                "chunks_per_s": [round(r, 2) for r in rates],
                "chunks_per_s_median": round(statistics.median(rates), 2),
                "cpu_s_per_chunk": round(statistics.median(cpu) / len(texts), 5),
                "nice": a.nice,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
