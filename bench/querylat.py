"""The bundled model's cost per question: one question embedded on the query session (one
thread, int8), as `rag/retrieve` embeds it, with nothing else running.

    python -m bench.querylat [--rounds 20]

Questions: the golden questions of ~/.cache/ragls-eval (the doc -> code sets, when built) or
else the test fixture's; each is embedded `--rounds` times after one warm-up. Prints JSON:
p50 / p95 / max in ms and the the number of questions. For the model card
(docs/embedding-model.md); not part of `make bench`, whose `rag/retrieve` figures include it."""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def questions(limit: int = 200) -> list[str]:
    sets = sorted((Path.home() / ".cache" / "ragls-eval").glob("*/golden.json"))
    files = sets or [REPO / "tests" / "fixtures" / "golden-polyglot.json"]
    out: list[str] = []
    for f in files:
        out += [q["query"] for q in json.loads(f.read_text())["queries"]][:10]
    return out[:limit]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args(argv)
    from ragls.config import Settings
    from ragls.embedding import make_embedder

    emb = make_embedder(Settings().embedder)
    qs = questions()
    emb.embed_query(qs[0])  # the session's first run allocates its buffers
    times: list[float] = []
    for _ in range(a.rounds):
        for q in qs:
            t = time.perf_counter()
            emb.embed_query(q)
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    p = lambda q: times[max(0, math.ceil(q / 100 * len(times)) - 1)]  # noqa: E731
    print(
        json.dumps(
            {
                "model": emb.model_id,
                "questions": len(qs),
                "samples": len(times),
                "p50_ms": round(p(50), 2),
                "p95_ms": round(p(95), 2),
                "max_ms": round(times[-1], 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
