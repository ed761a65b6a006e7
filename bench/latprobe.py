"""Query-embedding latency while the same process embeds documents in the background.

    python -m bench.latprobe TEXTS.json [--seconds 15] [--rounds 2]

It reproduces the server's situation during the dense backfill: an indexing thread runs the
bundled model's document session (all cores) without pause, and the main thread embeds one
query every 100 ms with the single-threaded query session, as `rag/retrieve` does. Each
configuration of the indexing thread gets the same time, interleaved over `--rounds`:

- `nice5`: the server's default (indexing.nice = 5)
- `nice19`: the lowest normal priority
- `idle`: SCHED_IDLE (runs only when nothing else wants the CPU)
- `nice5-nospin`: nice 5, ONNX Runtime intra-op threads do not spin while waiting
- `nice5-1thread`: nice 5, one intra-op thread for documents (a core left for queries)

Prints JSON per configuration: query latency p50/p95 and the background throughput. It backs
the latency analysis in docs/history/performance-log.md; it is not part of `make bench`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from pathlib import Path

CONFIGS = ["nice5", "nice19", "idle", "nice5-nospin", "nice5-1thread"]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("texts", type=Path)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    a = ap.parse_args(argv)

    import onnxruntime as ort

    from ragls.config import EmbedderSettings
    from ragls.embedding.onnx_local import MODEL_DIR, LocalOnnxEmbedder

    texts: list[str] = json.loads(a.texts.read_text("utf-8"))
    queries = ["how are errors wrapped and returned", "parse_args", "retry with backoff", "HttpClient.send"]
    query_emb = LocalOnnxEmbedder(EmbedderSettings())  # its query session is the one under test
    results: dict[str, dict[str, list[float]]] = {}

    def session(threads: int, spin: bool) -> ort.InferenceSession:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        if not spin:
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(MODEL_DIR / "model.onnx"), opts, providers=["CPUExecutionProvider"])

    for _ in range(a.rounds):
        for cfg in a.configs.split(","):
            stop = threading.Event()
            done = [0]
            started = threading.Event()

            def indexer(
                cfg: str = cfg, stop: threading.Event = stop, done: list[int] = done, started: threading.Event = started
            ) -> None:
                tid = threading.get_native_id()
                if cfg == "idle":
                    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
                else:
                    os.setpriority(os.PRIO_PROCESS, tid, 19 if cfg == "nice19" else 5)
                emb = LocalOnnxEmbedder(EmbedderSettings())
                emb._docs = session(1 if cfg.endswith("1thread") else (os.cpu_count() or 1), not cfg.endswith("nospin"))
                emb.embed_documents(texts[:8])
                started.set()
                i = 0
                while not stop.is_set():
                    batch = texts[i % len(texts) : i % len(texts) + 32] or texts[:32]
                    emb.embed_documents(batch)
                    done[0] += len(batch)
                    i += 32

            th = threading.Thread(target=indexer, daemon=True)
            th.start()
            started.wait(120)
            lat: list[float] = []
            t_end = time.monotonic() + a.seconds
            t0 = time.monotonic()
            k = 0
            while time.monotonic() < t_end:
                t = time.perf_counter()
                query_emb.embed_query(queries[k % len(queries)])
                lat.append((time.perf_counter() - t) * 1000)
                k += 1
                time.sleep(0.1)
            rate = done[0] / (time.monotonic() - t0)
            stop.set()
            th.join(60)
            r = results.setdefault(cfg, {"lat": [], "rate": []})
            r["lat"].extend(lat)
            r["rate"].append(rate)
    out = {
        cfg: {
            "query_p50_ms": round(pct(r["lat"], 50), 1),
            "query_p95_ms": round(pct(r["lat"], 95), 1),
            "n": len(r["lat"]),
            "background_chunks_per_s": round(sum(r["rate"]) / len(r["rate"]), 1),
        }
        for cfg, r in results.items()
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
