"""Peak memory of the bundled embedder under different ONNX Runtime settings.

    python -m bench.memprobe [--batch 32] [--tokens 256] [--no-arena] [--no-mem-pattern] [--texts N]

Each configuration runs in a fresh process (peak RSS, VmHWM, only ever grows), embeds
`--texts` long chunks in batches of `--batch`, and prints JSON: peak RSS after import, after
creating the sessions and after embedding, and the throughput. It backs the memory analysis
in docs/history/performance-log.md; it is not part of `make bench`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def hwm_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--texts", type=int, default=64)
    ap.add_argument("--no-arena", action="store_true", help="SessionOptions.enable_cpu_mem_arena = False")
    ap.add_argument("--no-mem-pattern", action="store_true", help="SessionOptions.enable_mem_pattern = False")
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args(argv)

    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from ragls.embedding.onnx_local import MODEL_DIR

    after_import = hwm_mb()
    tok = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tok.enable_truncation(max_length=a.tokens)
    tok.no_padding()

    def session(threads: int) -> ort.InferenceSession:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        if a.no_arena:
            opts.enable_cpu_mem_arena = False
        if a.no_mem_pattern:
            opts.enable_mem_pattern = False
        return ort.InferenceSession(str(MODEL_DIR / "model.onnx"), opts, providers=["CPUExecutionProvider"])

    docs = session(a.threads or (os.cpu_count() or 1))
    session(1)  # the server also holds a single-threaded query session
    after_sessions = hwm_mb()
    # Long code-like texts: every one is truncated at --tokens, the worst case for memory.
    text = " ".join(f"def function_{i}(argument_{i}, value): return compute(argument_{i}) + value" for i in range(60))
    texts = [f"{i} {text}" for i in range(a.texts)]
    t0 = time.perf_counter()
    for start in range(0, len(texts), a.batch):
        encs = tok.encode_batch(texts[start : start + a.batch])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        docs.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    dt = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "batch": a.batch,
                "tokens": a.tokens,
                "arena": not a.no_arena,
                "mem_pattern": not a.no_mem_pattern,
                "hwm_after_import_mb": round(after_import),
                "hwm_after_sessions_mb": round(after_sessions),
                "hwm_after_embed_mb": round(hwm_mb()),
                "chunks_per_s": round(len(texts) / dt, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
